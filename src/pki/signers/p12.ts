import { readPkcs12 } from '../pkcs12/read-pkcs12.js';
import { createKeySigner } from './key-signer.js';
import type { Signer } from './signer.js';

export interface CreateP12SignerOptions {
  /** The PKCS#12 file's bytes (SEAL_P12). */
  p12: Uint8Array;
  /** SEAL_P12_PASSWORD. */
  password: string;
}

/**
 * A signer from a PKCS#12 file (DESIGN: keys, "PKCS#12 file"). Read in pure JS; a wrong password or a
 * damaged file throws `Pkcs12Invalid`.
 *
 * ```ts
 * const signer = await createP12Signer({ p12: await readFile(config.sealP12), password: config.sealP12Password });
 * ```
 */
export async function createP12Signer(options: CreateP12SignerOptions): Promise<Signer> {
  const { privateKey, certificate, chain } = readPkcs12(options);
  return createKeySigner({ privateKey, certificate, chain });
}
