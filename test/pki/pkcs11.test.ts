import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import * as graphene from 'graphene-pk11';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { certificateFields } from '../../src/pki/certificate-fields.js';
import { SignerUnavailable } from '../../src/pki/errors.js';
import { createPkcs11Signer } from '../../src/pki/signers/pkcs11.js';
import { onePagePdf } from '../fixtures/pdf-fixtures.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';
import { hasTool, pdfsig, workspace, type Workspace } from '../pdf/oracles.js';

const run = promisify(execFile);
const MODULE = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so'].find(
  (p) => existsSync(p),
);
const PIN = '5678';
const skip =
  !hasTool('softhsm2-util') || !MODULE ? 'softhsm2 is not installed (apt-get install softhsm2)' : false;

describe('seal with a key inside a PKCS#11 token (SoftHSM)', { skip }, () => {
  let space: Workspace;
  let pki: TestPki;
  const chains = new Map<string, Uint8Array[]>();

  before(async () => {
    space = await workspace();
    pki = await createTestPki();
    await mkdir(join(space.dir, 'tokens'));
    const conf = await space.write(
      'softhsm2.conf',
      `directories.tokendir = ${space.dir}/tokens\nobjectstore.backend = file\nlog.level = ERROR\n`,
    );
    // SoftHSM reads its configuration when the library initialises, in this process.
    process.env.SOFTHSM2_CONF = conf;
    await run('softhsm2-util', [
      '--init-token',
      '--free',
      '--label',
      'signery',
      '--so-pin',
      '1234',
      '--pin',
      PIN,
    ]);
    const certificates: { label: string; der: Uint8Array; id: string }[] = [];
    for (const [i, key] of (['RSA', 'ECDSA'] as const).entries()) {
      const signer = await pki.signer({ name: `HSM seal ${key}`, key });
      const keyFile = await space.write(
        `${key}.pem`,
        signer.privateKey.export({ type: 'pkcs8', format: 'pem' }),
      );
      const label = `seal-${key.toLowerCase()}`;
      const id = `0${i + 1}`;
      await run('softhsm2-util', [
        '--import',
        keyFile,
        '--token',
        'signery',
        '--label',
        label,
        '--id',
        id,
        '--pin',
        PIN,
      ]);
      certificates.push({ label, der: signer.certificate, id });
      chains.set(label, signer.chain);
    }
    // softhsm2-util imports keys only; the certificates go in through PKCS#11 itself.
    const module = graphene.Module.load(MODULE!, 'softhsm');
    module.initialize();
    try {
      const session = module
        .getSlots(true)
        .items(0)
        .open(graphene.SessionFlag.SERIAL_SESSION | graphene.SessionFlag.RW_SESSION);
      session.login(PIN);
      for (const { label, der, id } of certificates) {
        session.create({
          class: graphene.ObjectClass.CERTIFICATE,
          certType: graphene.CertificateType.X_509,
          token: true,
          label,
          id: Buffer.from(id, 'hex'),
          subject: Buffer.from(certificateFields(der).subject),
          value: Buffer.from(der),
        });
      }
      session.logout();
      session.close();
    } finally {
      module.finalize();
    }
  });
  after(() => space.remove());

  for (const label of ['seal-rsa', 'seal-ecdsa']) {
    it(`seals with ${label}: the key never leaves the token and the signature is valid`, async () => {
      const signer = await createPkcs11Signer({ module: MODULE!, pin: PIN, label, chain: chains.get(label) });
      try {
        const { pdf } = await signPdf({
          pdf: onePagePdf().bytes,
          signer,
          reason: 'Organisation seal',
          // The status a signing service checks before signing (issue 38), signed into the CMS.
          signerStatus: await pki.status(),
        });
        const [check] = (await verifyPdf({ pdf, trustAnchors: [pki.root.certificate] })).signatures;
        assert.equal(check!.indication, 'TOTAL_PASSED', JSON.stringify(check!.problems));
        assert.equal(check!.signer!.commonName, label === 'seal-rsa' ? 'HSM seal RSA' : 'HSM seal ECDSA');
        if (hasTool('pdfsig')) {
          const [verdict] = await pdfsig(await space.write(`${label}.pdf`, pdf));
          assert.equal(verdict!.validation, 'Signature is Valid.');
        }
      } finally {
        signer.close();
      }
    });
  }

  it('two signers on the same token work side by side', async () => {
    const rsa = await createPkcs11Signer({
      module: MODULE!,
      pin: PIN,
      label: 'seal-rsa',
      chain: chains.get('seal-rsa'),
    });
    const ec = await createPkcs11Signer({
      module: MODULE!,
      pin: PIN,
      label: 'seal-ecdsa',
      chain: chains.get('seal-ecdsa'),
    });
    try {
      const data = new Uint8Array([1, 2, 3]);
      assert.ok((await rsa.sign({ data, digestAlgorithm: 'SHA-256' })).length === 256);
      assert.equal((await ec.sign({ data, digestAlgorithm: 'SHA-512' }))[0], 0x30);
    } finally {
      rsa.close();
      ec.close();
    }
  });

  it('a wrong PIN or an unknown label is SignerUnavailable', async () => {
    await assert.rejects(
      createPkcs11Signer({ module: MODULE!, pin: '0000', label: 'seal-rsa' }),
      SignerUnavailable,
    );
    await assert.rejects(createPkcs11Signer({ module: MODULE!, pin: PIN, label: 'nope' }), SignerUnavailable);
    await assert.rejects(
      createPkcs11Signer({ module: '/nonexistent/lib.so', pin: PIN, label: 'seal-rsa' }),
      SignerUnavailable,
    );
  });
});
