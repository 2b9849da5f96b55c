import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { pem } from '../../src/pki/dev-ca.js';
import { Pkcs12Invalid } from '../../src/pki/errors.js';
import { createP12Signer } from '../../src/pki/signers/p12.js';
import { verifySignatureValue } from '../../src/pki/verify-signature-value.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';
import { hasTool, workspace, type Workspace } from '../pdf/oracles.js';

const run = promisify(execFile);

describe(
  'PKCS#12 signer (pure JS, no openssl at run time)',
  { skip: !hasTool('openssl') && 'openssl is needed to make the test files' },
  () => {
    let pki: TestPki;
    let space: Workspace;
    const files = new Map<string, string>();

    before(async () => {
      pki = await createTestPki();
      space = await workspace();
      for (const key of ['RSA', 'ECDSA'] as const) {
        const signer = await pki.signer({ name: `P12 ${key}`, key });
        const keyPath = await space.write(
          `${key}.key`,
          signer.privateKey.export({ type: 'pkcs8', format: 'pem' }),
        );
        const certPath = await space.write(`${key}.pem`, pem('CERTIFICATE', signer.certificate));
        const chainPath = await space.write(
          `${key}-chain.pem`,
          signer.chain.map((c) => pem('CERTIFICATE', c)).join(''),
        );
        const base = [
          'pkcs12',
          '-export',
          '-inkey',
          keyPath,
          '-in',
          certPath,
          '-certfile',
          chainPath,
          '-passout',
          'pass:pässword',
        ];
        // OpenSSL 3 default: PBES2 with AES-256-CBC and PBKDF2, SHA-256 MAC.
        files.set(`${key}-aes`, `${space.dir}/${key}-aes.p12`);
        await run('openssl', [...base, '-out', files.get(`${key}-aes`)!]);
        // Older exports: 3DES for the key, RC2-40 for the certificates, SHA-1 MAC (needs the legacy provider).
        const legacy = `${space.dir}/${key}-legacy.p12`;
        try {
          await run('openssl', [...base, '-legacy', '-out', legacy]);
          files.set(`${key}-legacy`, legacy);
        } catch {
          // OpenSSL without its legacy provider cannot write RC2; that variant is then not tested.
        }
      }
    });
    after(() => space.remove());

    it('opens OpenSSL 3 (AES) and legacy (3DES/RC2) files with RSA and EC keys, chain nearest issuer first', async () => {
      assert.ok(files.size >= 2);
      for (const [name, path] of files) {
        const signer = await createP12Signer({ p12: await readFile(path), password: 'pässword' });
        assert.equal(signer.keyAlgorithm, name.startsWith('RSA') ? 'RSA' : 'ECDSA', name);
        assert.deepEqual(signer.chain, [pki.intermediate.certificate, pki.root.certificate], name);
        const data = new Uint8Array(Buffer.from('signed attributes'));
        const signature = await signer.sign({ data, digestAlgorithm: 'SHA-384' });
        verifySignatureValue({
          certificate: signer.certificate,
          data,
          signature,
          digestAlgorithm: 'SHA-384',
        });
      }
    });

    it('a wrong password or a damaged file is Pkcs12Invalid', async () => {
      for (const path of files.values()) {
        await assert.rejects(
          createP12Signer({ p12: await readFile(path), password: 'wrong' }),
          Pkcs12Invalid,
        );
      }
      const damaged = new Uint8Array(await readFile(files.get('RSA-aes')!)).subarray(0, 200);
      await assert.rejects(createP12Signer({ p12: damaged, password: 'pässword' }), Pkcs12Invalid);
    });
  },
);
