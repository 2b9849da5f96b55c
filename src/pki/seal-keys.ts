import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../core/config.js';
import { openDevCa, openSharedDevCa, type DevCa, type DevCaStore } from './dev-ca.js';
import { createP12Signer } from './signers/p12.js';
import { createPkcs11Signer } from './signers/pkcs11.js';
import type { Signer } from './signers/signer.js';

/** The organisation key that seals and signs on behalf of users, and the roots it chains to. */
export interface SealKeys {
  signer: Signer;
  /** Roots a verification trusts: the dev CA's when it is in use. */
  trustAnchors: Uint8Array[];
  /** `internal` and nothing else configured yet: the names PUT /documents/seal accepts as `signatureProvider`. */
  providers: string[];
  /** The development CA when it is the seal (it answers for its certificates' revocation itself). */
  devCa?: DevCa;
  close(): Promise<void>;
}

/**
 * Opens the seal key once, on first use (DESIGN: keys): a PKCS#12 file (SEAL_P12), a PKCS#11 token
 * (SEAL_PKCS11_*), or else the installation's dev CA: kept in `sharedDevCa` (the database) where
 * several nodes share one installation, so that every node seals with the same key (one left under
 * DATA_DIR/pki by an older release is taken over), else under DATA_DIR/pki.
 *
 * ```ts
 * const seal = sealKeys(config, new DevPkiStore(db));
 * const { signer } = await seal();
 * ```
 */
export function sealKeys(
  config: Config,
  sharedDevCa?: DevCaStore,
): (() => Promise<SealKeys>) & { close(): Promise<void> } {
  let opened: Promise<SealKeys> | undefined;
  const open = async (): Promise<SealKeys> => {
    const { seal } = config;
    if (seal.p12) {
      const signer = await createP12Signer({
        p12: await readFile(seal.p12),
        password: seal.p12Password ?? '',
      });
      return { signer, trustAnchors: [], providers: ['internal'], close: async () => {} };
    }
    if (seal.pkcs11Module) {
      const signer = await createPkcs11Signer({
        module: seal.pkcs11Module,
        pin: seal.pkcs11Pin ?? '',
        label: seal.pkcs11Label ?? 'seal',
      });
      return { signer, trustAnchors: [], providers: ['internal'], close: async () => signer.close() };
    }
    const dir = join(config.dataDir, 'pki');
    const ca = sharedDevCa
      ? await openSharedDevCa({ store: sharedDevCa, legacyDir: dir, publicUrl: config.publicUrl })
      : await openDevCa({ dir, publicUrl: config.publicUrl });
    return {
      signer: ca.sealSigner,
      trustAnchors: [ca.rootCertificate],
      providers: ['internal'],
      devCa: ca,
      close: async () => {},
    };
  };
  const get = () => (opened ??= open());
  return Object.assign(get, {
    async close() {
      if (opened) await (await opened).close();
    },
  });
}
