import { readSignedData } from '../pki/cms/read-signed-data.js';
import { verifySignedData } from '../pki/cms/verify-signed-data.js';
import { bytesEqual, derLength } from '../pki/der.js';
import { SignatureValueInvalid } from '../pki/errors.js';
import { PreparedSignatureMismatch } from './errors.js';
import type { PreparedSignatureState } from './prepared-signature.js';
import { signedBytes } from './writer/signature-placeholder.js';

export interface FinishSignatureFromFileOptions {
  /** The prepared PDF the session handed out. */
  prepared: Uint8Array;
  state: PreparedSignatureState;
  /** The file the client sends back with the signature filled in. */
  signed: Uint8Array;
}

/**
 * Two-step `/finish/file` (Contract): accepts the client's file only when nothing but the signature's
 * /Contents differs from the prepared one, and the CMS there verifies over the byte ranges with the
 * certificate the session was started for. Returns the accepted file.
 *
 * ```ts
 * const pdf = finishSignatureFromFile({ prepared, state, signed: uploaded });
 * ```
 */
export function finishSignatureFromFile(options: FinishSignatureFromFileOptions): Uint8Array {
  const { prepared, signed, state } = options;
  const [, start, end] = state.byteRange;
  const outside = (bytes: Uint8Array): Uint8Array => signedBytes(bytes, state.byteRange);
  if (signed.length !== prepared.length || !bytesEqual(outside(signed), outside(prepared))) {
    throw new PreparedSignatureMismatch(
      'The file differs from the prepared file outside the signature value',
    );
  }
  const hex = Buffer.from(signed.subarray(start + 1, end - 1)).toString('latin1');
  if (signed[start] !== 0x3c || signed[end - 1] !== 0x3e || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new PreparedSignatureMismatch('The signature value is not a hex string');
  }
  const padded = new Uint8Array(Buffer.from(hex, 'hex'));
  const der = padded.subarray(0, Math.min(derLength(padded), padded.length));
  let verification: ReturnType<typeof verifySignedData>;
  try {
    verification = verifySignedData({ cms: readSignedData({ der }), content: outside(signed) });
  } catch {
    throw new SignatureValueInvalid('The signature in the file is not a readable CMS');
  }
  if (!verification.digestMatches || !verification.signatureValid) {
    throw new SignatureValueInvalid(
      `The signature in the file does not verify: ${verification.problems.join('; ')}`,
    );
  }
  if (!verification.signerCertificate || !bytesEqual(verification.signerCertificate, state.certificate)) {
    throw new SignatureValueInvalid(
      'The file is signed with another certificate than the session was started for',
    );
  }
  return signed;
}
