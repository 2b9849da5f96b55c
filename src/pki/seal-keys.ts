import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../base/config.js';
import { openDevCa, openSharedDevCa, type DevCa, type DevCaStore } from './dev-ca.js';
import { openCscSigner } from './signers/csc.js';
import { createP12Signer } from './signers/p12.js';
import { createPkcs11Signer } from './signers/pkcs11.js';
import type { Signer } from './signers/signer.js';
import { loadTrustAnchors, ownChainAnchors } from './trust-anchors.js';

/** The organisation key that seals and signs on behalf of users, and the roots it chains to. */
export interface SealKeys {
  /** The organisation's own key: the `internal` provider. */
  signer: Signer;
  /**
   * Roots a verification trusts (issue 38): TRUST_ANCHORS, the seal key's own chain's root (from its
   * PKCS#12 file or token), and the dev CA's root when it is the seal.
   */
  trustAnchors: Uint8Array[];
  /**
   * The names the sign and seal calls accept as `signatureProvider`: `internal`, and `csc` when a
   * CSC service is configured (CSC_URL).
   */
  providers: string[];
  /**
   * The key of a provider, by default the installation's (SEAL_PROVIDER). The CSC credential is
   * opened on first use and kept; a service that cannot be reached is asked again next time.
   */
  signerFor(provider?: string): Promise<Signer>;
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
  let csc: Promise<Signer> | undefined;
  const openCsc = (): Promise<Signer> => {
    const settings = config.csc;
    if (!settings) return Promise.reject(new Error('No CSC service is configured (CSC_URL)'));
    csc ??= openCscSigner(settings).catch((error: unknown) => {
      csc = undefined;
      throw error;
    });
    return csc;
  };
  const withProviders = (own: Omit<SealKeys, 'providers' | 'signerFor'>): SealKeys => ({
    ...own,
    providers: config.csc ? ['internal', 'csc'] : ['internal'],
    signerFor: async (provider = config.seal.provider) => (provider === 'csc' ? openCsc() : own.signer),
  });
  const open = async (): Promise<SealKeys> => {
    const configured = config.trustAnchors ? await loadTrustAnchors(config.trustAnchors) : [];
    const own = await openOwn();
    const anchors = [...configured];
    for (const anchor of own.trustAnchors)
      if (!anchors.some((known) => Buffer.compare(known, anchor) === 0)) anchors.push(anchor);
    return withProviders({ ...own, trustAnchors: anchors });
  };
  const openOwn = async (): Promise<Omit<SealKeys, 'providers' | 'signerFor'>> => {
    const { seal } = config;
    if (seal.p12) {
      const signer = await createP12Signer({
        p12: await readFile(seal.p12),
        password: seal.p12Password ?? '',
      });
      return { signer, trustAnchors: ownChainAnchors(signer), close: async () => {} };
    }
    if (seal.pkcs11Module) {
      const signer = await createPkcs11Signer({
        module: seal.pkcs11Module,
        pin: seal.pkcs11Pin ?? '',
        label: seal.pkcs11Label ?? 'seal',
      });
      return { signer, trustAnchors: ownChainAnchors(signer), close: async () => signer.close() };
    }
    const dir = join(config.dataDir, 'pki');
    const ca = sharedDevCa
      ? await openSharedDevCa({ store: sharedDevCa, legacyDir: dir, publicUrl: config.publicUrl })
      : await openDevCa({ dir, publicUrl: config.publicUrl });
    return {
      signer: ca.sealSigner,
      trustAnchors: [ca.rootCertificate],
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
