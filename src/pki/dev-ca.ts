import {
  generateKeyPairSync,
  createPrivateKey,
  randomBytes,
  type KeyObject,
  X509Certificate,
} from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { issueCertificate, issueCrl } from './issue-certificate.js';
import { createKeySigner } from './signers/key-signer.js';
import type { Signer } from './signers/signer.js';

export interface OpenDevCaOptions {
  /** Where the CA lives: `DATA_DIR/pki`. Created on first use, reused afterwards. */
  dir: string;
  /** Organisation named in the seal certificate's subject (default "Signery"). */
  organisation?: string;
  /** Written into the seal certificate as its CRL distribution point, when the service publishes CRLs. */
  crlUrl?: string;
}

const FILES = {
  rootCertificate: 'root-ca.pem',
  rootKey: 'root-ca.key',
  sealCertificate: 'seal.pem',
  sealKey: 'seal.key',
} as const;

const YEAR_MS = 365 * 24 * 3600 * 1000;

/**
 * The development certificate authority (DESIGN: "a dev CA and seal certificate are generated under
 * DATA_DIR/pki when none is configured"): a root CA and an organisation seal certificate signed by
 * it. Keys are written with mode 0600. The files are created in a temporary directory and renamed
 * into place, so two processes starting together end up sharing one CA.
 *
 * ```ts
 * const ca = await openDevCa({ dir: join(config.dataDir, 'pki') });
 * const result = await signPdf({ pdf, signer: ca.sealSigner, trust: [ca.rootCertificate], ... });
 * ```
 */
export async function openDevCa(options: OpenDevCaOptions): Promise<DevCa> {
  const existing = await load(options.dir);
  if (existing) return existing;
  await mkdir(dirname(options.dir), { recursive: true });
  const staging = `${options.dir}.tmp-${randomBytes(6).toString('hex')}`;
  await mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    await generate(staging, options);
    await rename(staging, options.dir).catch(async (error: NodeJS.ErrnoException) => {
      // Another process won the race (or the directory holds files): use what is there.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  const created = await load(options.dir);
  if (!created) throw new Error(`The dev CA in ${options.dir} is incomplete`);
  return created;
}

/**
 * A loaded dev CA: its certificates, the seal signer, and fresh CRLs on demand.
 *
 * ```ts
 * const ca = await openDevCa({ dir });
 * await signPdf({ pdf, signer: ca.sealSigner, level: 'B-LT', tsa, validationData: { crls: [await ca.issueCrl()] } });
 * ```
 */
export class DevCa {
  readonly rootCertificate: Uint8Array;
  readonly sealCertificate: Uint8Array;
  readonly sealSigner: Signer;
  #rootKey: KeyObject;

  constructor(options: {
    rootCertificate: Uint8Array;
    rootKey: KeyObject;
    sealCertificate: Uint8Array;
    sealKey: KeyObject;
  }) {
    this.rootCertificate = options.rootCertificate;
    this.sealCertificate = options.sealCertificate;
    this.#rootKey = options.rootKey;
    this.sealSigner = createKeySigner({
      privateKey: options.sealKey,
      certificate: options.sealCertificate,
      chain: [options.rootCertificate],
    });
  }

  /**
   * A CRL of the root CA valid for a week from `now`, revoking nothing: the revocation data B-LT
   * embeds for certificates of this CA (it runs no OCSP responder).
   */
  async issueCrl(options: { now?: Date } = {}): Promise<Uint8Array> {
    const thisUpdate = options.now ?? new Date();
    return issueCrl({
      issuer: { certificate: this.rootCertificate, privateKey: this.#rootKey },
      thisUpdate,
      nextUpdate: new Date(thisUpdate.getTime() + 7 * 24 * 3600 * 1000),
    });
  }
}

async function load(dir: string): Promise<DevCa | undefined> {
  try {
    const [rootPem, rootKeyPem, sealPem, sealKeyPem] = await Promise.all(
      [FILES.rootCertificate, FILES.rootKey, FILES.sealCertificate, FILES.sealKey].map((name) =>
        readFile(join(dir, name), 'utf8'),
      ),
    );
    return new DevCa({
      rootCertificate: new Uint8Array(new X509Certificate(rootPem!).raw),
      rootKey: createPrivateKey(rootKeyPem!),
      sealCertificate: new Uint8Array(new X509Certificate(sealPem!).raw),
      sealKey: createPrivateKey(sealKeyPem!),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function generate(dir: string, options: OpenDevCaOptions): Promise<void> {
  const organisation = options.organisation ?? 'Signery';
  const now = Date.now();
  const root = generateKeyPairSync('rsa', { modulusLength: 3072 });
  const rootCertificate = await issueCertificate({
    subject: `CN=${organisation} development root CA, O=${organisation}`,
    publicKey: root.publicKey,
    selfPrivateKey: root.privateKey,
    notAfter: new Date(now + 10 * YEAR_MS),
    ca: true,
    keyUsage: ['keyCertSign', 'cRLSign'],
  });
  const seal = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const sealCertificate = await issueCertificate({
    subject: `CN=${organisation} seal, O=${organisation}`,
    publicKey: seal.publicKey,
    issuer: { certificate: rootCertificate, privateKey: root.privateKey },
    notAfter: new Date(now + 3 * YEAR_MS),
    keyUsage: ['digitalSignature', 'nonRepudiation'],
    ...(options.crlUrl ? { crlDistributionPoint: options.crlUrl } : {}),
  });
  await writeFile(join(dir, FILES.rootCertificate), pem('CERTIFICATE', rootCertificate));
  await writeFile(join(dir, FILES.sealCertificate), pem('CERTIFICATE', sealCertificate));
  for (const [name, key] of [
    [FILES.rootKey, root.privateKey],
    [FILES.sealKey, seal.privateKey],
  ] as const) {
    const path = join(dir, name);
    await writeFile(path, key.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    await chmod(path, 0o600); // writeFile's mode applies only to a file it creates
  }
}

/**
 * PEM text of DER bytes.
 *
 * ```ts
 * await writeFile('root.pem', pem('CERTIFICATE', ca.rootCertificate));
 * ```
 */
export function pem(label: string, der: Uint8Array): string {
  const base64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${base64.trimEnd()}\n-----END ${label}-----\n`;
}
