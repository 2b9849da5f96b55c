import {
  generateKeyPairSync,
  createPrivateKey,
  createPublicKey,
  randomBytes,
  type KeyObject,
  X509Certificate,
} from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { certificateFields } from './certificate-fields.js';
import { issueCertificate, issueCrl } from './issue-certificate.js';
import { answerOcsp, ocspRequest } from './ocsp.js';
import { revocationUrls } from './revocation-urls.js';
import { createKeySigner } from './signers/key-signer.js';
import type { Signer } from './signers/signer.js';
import type { LocalRevocation } from './revocation-fetcher.js';

export interface OpenDevCaOptions {
  /** Where the CA lives: `DATA_DIR/pki`. Created on first use, reused afterwards. */
  dir: string;
  /** Organisation named in the seal certificate's subject (default "Signery"). */
  organisation?: string;
  /**
   * PUBLIC_URL: the seal certificate names Signery's own CRL (`/pki/dev-ca.crl`) and OCSP responder
   * (`/pki/ocsp`) under it, so the revocation of the seal can be proved and B-LT reached (issue 23).
   */
  publicUrl?: string;
}

const FILES = {
  rootCertificate: 'root-ca.pem',
  rootKey: 'root-ca.key',
  sealCertificate: 'seal.pem',
  sealKey: 'seal.key',
} as const;

const YEAR_MS = 365 * 24 * 3600 * 1000;

/** A dev CA as PEM text: what is stored, wherever it is stored. */
export interface DevCaMaterial {
  rootCertificate: string;
  rootKey: string;
  sealCertificate: string;
  sealKey: string;
}

/**
 * Where an installation keeps its one dev CA (the database, so every node shares it): `load` answers
 * the stored one, `saveIfAbsent` stores one unless another is already there (first writer wins).
 */
export interface DevCaStore {
  load(): Promise<DevCaMaterial | undefined>;
  saveIfAbsent(material: DevCaMaterial): Promise<void>;
  /** Replaces the seal certificate (PEM) when it is still `previous` (a reissue; see reissuedSeal). */
  replaceSealCertificate(previous: string, next: string): Promise<void>;
}

/**
 * The installation's dev CA, shared by its nodes through `store`: the stored one, or else one made
 * now (from `legacyDir`, the DATA_DIR/pki of installations older than the shared CA, when it holds
 * one, so earlier signatures still chain to the same root) and stored, unless another node stored
 * its own first: then that one is used.
 *
 * ```ts
 * const ca = await openSharedDevCa({ store: new DevPkiStore(db), legacyDir: join(dataDir, 'pki') });
 * ```
 */
export async function openSharedDevCa(options: {
  store: DevCaStore;
  legacyDir?: string;
  organisation?: string;
  publicUrl?: string;
}): Promise<DevCa> {
  let stored = await options.store.load();
  if (!stored) {
    const legacy = options.legacyDir ? await readDevCaMaterial(options.legacyDir) : undefined;
    await options.store.saveIfAbsent(legacy ?? (await generateMaterial(options)));
    stored = await options.store.load();
    if (!stored) throw new Error('The dev CA could not be stored');
  }
  const reissued = await reissuedSeal(stored, options.publicUrl);
  if (!reissued) return devCaOf(stored);
  // Compare-and-set: of nodes starting together, one replaces it and all use the stored one.
  await options.store.replaceSealCertificate(stored.sealCertificate, reissued);
  const current = await options.store.load();
  if (!current) throw new Error('The dev CA is gone');
  return devCaOf(current);
}

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
  const existing = await readDevCaMaterial(options.dir);
  if (existing) {
    const reissued = await reissuedSeal(existing, options.publicUrl);
    if (!reissued) return devCaOf(existing);
    const staging = join(options.dir, `${FILES.sealCertificate}.tmp-${randomBytes(6).toString('hex')}`);
    await writeFile(staging, reissued);
    await rename(staging, join(options.dir, FILES.sealCertificate));
    return devCaOf({ ...existing, sealCertificate: reissued });
  }
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
 * A seal certificate that names Signery's CRL and OCSP addresses under `publicUrl`, issued by the same
 * root over the same key, when the stored one names other addresses or none (dev CAs made before them):
 * signatures made with the earlier certificate still chain to the same root. Undefined when the stored
 * one is right (or no `publicUrl` is known).
 */
async function reissuedSeal(
  material: DevCaMaterial,
  publicUrl: string | undefined,
): Promise<string | undefined> {
  if (!publicUrl) return undefined;
  const urls = devCaUrls(publicUrl);
  const current = new Uint8Array(new X509Certificate(material.sealCertificate).raw);
  const named = revocationUrls(current);
  if (named.crl.includes(urls.crl) && named.ocsp.includes(urls.ocsp)) return undefined;
  const sealKey = createPrivateKey(material.sealKey);
  const rootCertificate = new Uint8Array(new X509Certificate(material.rootCertificate).raw);
  const fields = new x509.X509Certificate(current);
  const certificate = await issueCertificate({
    subject: fields.subject,
    publicKey: createPublicKey(sealKey),
    issuer: { certificate: rootCertificate, privateKey: createPrivateKey(material.rootKey) },
    notAfter: fields.notAfter,
    keyUsage: ['digitalSignature', 'nonRepudiation'],
    crlDistributionPoint: urls.crl,
    ocspUrl: urls.ocsp,
  });
  return pem('CERTIFICATE', certificate);
}

/** Where Signery publishes the dev CA's revocation data (http/routes/dev-pki.ts). */
export function devCaUrls(publicUrl: string): { crl: string; ocsp: string } {
  return { crl: `${publicUrl}/pki/dev-ca.crl`, ocsp: `${publicUrl}/pki/ocsp` };
}

/**
 * A loaded dev CA: its certificates, the seal signer, and fresh CRLs on demand.
 *
 * ```ts
 * const ca = await openDevCa({ dir });
 * await signPdf({ pdf, signer: ca.sealSigner, level: 'B-LT', tsa, validationData: { crls: [await ca.issueCrl()] } });
 * ```
 */
export class DevCa implements LocalRevocation {
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

  /**
   * The CA's OCSP responder (RFC 6960), answered with the root key: `good` for the seal certificate
   * (this CA revokes nothing), `unknown` for any other serial; `unauthorized` for another issuer's.
   */
  async answerOcsp(request: Uint8Array, now: Date): Promise<Uint8Array> {
    const sealSerial = Buffer.from(certificateFields(this.sealCertificate).serialNumber).toString('hex');
    return answerOcsp({
      request,
      issuer: { certificate: this.rootCertificate, privateKey: this.#rootKey },
      statusOf: (serial) => (serial === sealSerial ? { status: 'good' } : { status: 'unknown' }),
      now,
      validForMs: OCSP_VALIDITY_MS,
    });
  }

  /**
   * LocalRevocation: an OCSP answer for a certificate this CA issued (one its root signed), made in
   * process rather than fetched from our own PUBLIC_URL.
   */
  async ocsp(certificate: Uint8Array, issuer: Uint8Array, now: Date): Promise<Uint8Array | undefined> {
    if (Buffer.compare(issuer, this.rootCertificate) !== 0) return undefined;
    if (Buffer.compare(certificate, this.sealCertificate) !== 0) return undefined;
    return this.answerOcsp(await ocspRequest(certificate, issuer), now);
  }
}

const OCSP_VALIDITY_MS = 24 * 3600 * 1000;

async function load(dir: string): Promise<DevCa | undefined> {
  const material = await readDevCaMaterial(dir);
  return material && devCaOf(material);
}

/**
 * The dev CA kept under `dir` (DATA_DIR/pki), or undefined when there is none: what `signery
 * migrate-store` carries into the database of a PostgreSQL installation.
 */
export async function readDevCaMaterial(dir: string): Promise<DevCaMaterial | undefined> {
  try {
    const [rootCertificate, rootKey, sealCertificate, sealKey] = await Promise.all(
      [FILES.rootCertificate, FILES.rootKey, FILES.sealCertificate, FILES.sealKey].map((name) =>
        readFile(join(dir, name), 'utf8'),
      ),
    );
    return {
      rootCertificate: rootCertificate!,
      rootKey: rootKey!,
      sealCertificate: sealCertificate!,
      sealKey: sealKey!,
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function devCaOf(material: DevCaMaterial): DevCa {
  return new DevCa({
    rootCertificate: new Uint8Array(new X509Certificate(material.rootCertificate).raw),
    rootKey: createPrivateKey(material.rootKey),
    sealCertificate: new Uint8Array(new X509Certificate(material.sealCertificate).raw),
    sealKey: createPrivateKey(material.sealKey),
  });
}

async function generate(dir: string, options: OpenDevCaOptions): Promise<void> {
  const material = await generateMaterial(options);
  await writeFile(join(dir, FILES.rootCertificate), material.rootCertificate);
  await writeFile(join(dir, FILES.sealCertificate), material.sealCertificate);
  for (const [name, key] of [
    [FILES.rootKey, material.rootKey],
    [FILES.sealKey, material.sealKey],
  ] as const) {
    const path = join(dir, name);
    await writeFile(path, key, { mode: 0o600 });
    await chmod(path, 0o600); // writeFile's mode applies only to a file it creates
  }
}

async function generateMaterial(options: {
  organisation?: string;
  publicUrl?: string;
}): Promise<DevCaMaterial> {
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
    ...(options.publicUrl
      ? {
          crlDistributionPoint: devCaUrls(options.publicUrl).crl,
          ocspUrl: devCaUrls(options.publicUrl).ocsp,
        }
      : {}),
  });
  const keyPem = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    rootCertificate: pem('CERTIFICATE', rootCertificate),
    rootKey: keyPem(root.privateKey),
    sealCertificate: pem('CERTIFICATE', sealCertificate),
    sealKey: keyPem(seal.privateKey),
  };
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
