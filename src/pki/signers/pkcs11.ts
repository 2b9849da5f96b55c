import { X509Certificate } from 'node:crypto';
import type * as Graphene from 'graphene-pk11';
import { digest } from '../algorithms.js';
import { SignerUnavailable } from '../errors.js';
import { p1363ToDer } from '../verify-signature-value.js';
import type { KeyAlgorithm, SignOptions, Signer } from './signer.js';

export interface CreatePkcs11SignerOptions {
  /** Path of the PKCS#11 library (SEAL_PKCS11_MODULE), e.g. /usr/lib/softhsm/libsofthsm2.so. */
  module: string;
  /** User PIN (SEAL_PKCS11_PIN). */
  pin: string;
  /** CKA_LABEL of the private key and of its certificate (SEAL_PKCS11_LABEL). */
  label: string;
  /** The token to use, by label; default the first token with such a key. */
  tokenLabel?: string;
  /** The certificate (DER) when it is not stored on the token. */
  certificate?: Uint8Array;
  /** Issuer certificates (DER), nearest first. */
  chain?: Uint8Array[];
}

/** A PKCS#11 signer holds a logged-in session; close it on shutdown. */
export interface Pkcs11Signer extends Signer {
  close(): void;
}

// PKCS#11 allows one C_Initialize per library per process: loaded libraries are shared and counted.
const loaded = new Map<string, { module: Graphene.Module; users: number }>();

/** Whether, and how, graphene-pk11 has been loaded. */
let library: Promise<typeof Graphene> | undefined;

/**
 * graphene-pk11 (an optional dependency: its native module is built at install) is loaded only by an
 * installation with a token (SEAL_PKCS11_MODULE), never at every start. Rejects with a message that
 * says what to do when the package is missing (`npm install --omit=optional`, or a failed build).
 */
export function loadPkcs11Library(): Promise<typeof Graphene> {
  library ??= import('graphene-pk11').catch((error: unknown) => {
    library = undefined;
    const code = (error as { code?: unknown } | undefined)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new Pkcs11LibraryMissing(
        'SEAL_PKCS11_MODULE is set, but the package that talks to PKCS#11 tokens, graphene-pk11 (an optional ' +
          'dependency), is not installed: run `npm install graphene-pk11` (it builds a native module), or ' +
          'unset SEAL_PKCS11_MODULE',
      );
    }
    throw error;
  });
  return library;
}

/** SEAL_PKCS11_MODULE names a token, but graphene-pk11 is not installed. */
export class Pkcs11LibraryMissing extends Error {
  override name = 'Pkcs11LibraryMissing';
}

/**
 * A signer whose key stays in a PKCS#11 token (an HSM; SoftHSM in tests), through graphene-pk11.
 * RSA keys sign with CKM_SHA*_RSA_PKCS (the token hashes the signed attributes); EC keys sign the
 * digest with CKM_ECDSA and the raw r||s is turned into DER for CMS.
 *
 * ```ts
 * const signer = await createPkcs11Signer({ module: config.pkcs11Module, pin: config.pkcs11Pin, label: 'seal' });
 * try { await signPdf({ pdf, signer }); } finally { signer.close(); }
 * ```
 */
export async function createPkcs11Signer(options: CreatePkcs11SignerOptions): Promise<Pkcs11Signer> {
  const graphene = await loadPkcs11Library();
  const module = acquire(graphene, options.module);
  let session: Graphene.Session | undefined;
  try {
    for (const slot of module.getSlots(true)) {
      if (options.tokenLabel && slot.getToken().label.trim() !== options.tokenLabel) continue;
      const candidate = slot.open(graphene.SessionFlag.SERIAL_SESSION);
      try {
        candidate.login(options.pin, graphene.UserType.USER);
      } catch (error) {
        // Login state is per application and token: a second signer on the same token is already in.
        if (!describe(error).includes('CKR_USER_ALREADY_LOGGED_IN')) {
          candidate.close();
          throw new SignerUnavailable(`The PKCS#11 login failed (${describe(error)})`);
        }
      }
      if (candidate.find({ class: graphene.ObjectClass.PRIVATE_KEY, label: options.label }).length > 0) {
        session = candidate;
        break;
      }
      candidate.close();
    }
    if (!session)
      throw new SignerUnavailable(`No PKCS#11 token holds a private key labelled "${options.label}"`);
    const key = session
      .find({ class: graphene.ObjectClass.PRIVATE_KEY, label: options.label })
      .items(0)
      .toType<Graphene.PrivateKey>();
    let certificate = options.certificate;
    if (!certificate) {
      const found = session.find({ class: graphene.ObjectClass.CERTIFICATE, label: options.label });
      if (found.length === 0)
        throw new SignerUnavailable(`No certificate labelled "${options.label}" on the token`);
      certificate = new Uint8Array(found.items(0).toType<Graphene.X509Certificate>().value);
    }
    const keyType = new X509Certificate(certificate).publicKey.asymmetricKeyType;
    const keyAlgorithm: KeyAlgorithm = keyType === 'ec' ? 'ECDSA' : 'RSA';
    const open = session;
    let closed = false;
    return {
      certificate,
      chain: options.chain ?? [],
      keyAlgorithm,
      async sign({ data, digestAlgorithm }: SignOptions): Promise<Uint8Array> {
        if (closed) throw new SignerUnavailable('The PKCS#11 signer is closed');
        try {
          if (keyAlgorithm === 'RSA') {
            const mechanism = {
              'SHA-256': 'SHA256_RSA_PKCS',
              'SHA-384': 'SHA384_RSA_PKCS',
              'SHA-512': 'SHA512_RSA_PKCS',
            }[digestAlgorithm];
            return new Uint8Array(open.createSign(mechanism, key).once(Buffer.from(data)));
          }
          const raw = open.createSign('ECDSA', key).once(Buffer.from(digest(digestAlgorithm, data)));
          return p1363ToDer(new Uint8Array(raw));
        } catch (error) {
          throw new SignerUnavailable(`The PKCS#11 token could not sign (${describe(error)})`);
        }
      },
      close(): void {
        if (closed) return;
        closed = true;
        try {
          // Closing the application's last session on a token logs it out (PKCS#11 v2.40 5.6).
          open.close();
        } finally {
          release(options.module);
        }
      },
    };
  } catch (error) {
    session?.close();
    release(options.module);
    if (error instanceof SignerUnavailable) throw error;
    throw new SignerUnavailable(`The PKCS#11 signer cannot be opened (${describe(error)})`);
  }
}

function acquire(graphene: typeof Graphene, path: string): Graphene.Module {
  const entry = loaded.get(path);
  if (entry) {
    entry.users++;
    return entry.module;
  }
  let module: Graphene.Module;
  try {
    module = graphene.Module.load(path, 'signery');
    module.initialize();
  } catch (error) {
    throw new SignerUnavailable(`The PKCS#11 module cannot be loaded (${describe(error)})`);
  }
  loaded.set(path, { module, users: 1 });
  return module;
}

function release(path: string): void {
  const entry = loaded.get(path);
  if (!entry) return;
  if (--entry.users > 0) return;
  loaded.delete(path);
  entry.module.finalize();
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message.slice(0, 200) : 'unknown error';
}
