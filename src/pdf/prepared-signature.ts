import type { DigestAlgorithm } from '../pki/algorithms.js';
import type { KeyAlgorithm } from '../pki/signers/signer.js';
import type { ByteRange } from './writer/signature-placeholder.js';

/**
 * Everything needed to finish a prepared signature besides the prepared PDF itself. DESIGN: two-step
 * signing is stateless between requests; any node finishes the session from the prepared file and
 * this state (store it as JSON with `preparedStateToJson`).
 */
export interface PreparedSignatureState {
  byteRange: ByteRange;
  /** DER SET of the CMS signed attributes: what the signer's key signs. */
  signedAttributes: Uint8Array;
  /** `digestAlgorithm` hash of `signedAttributes` (what a two-step client signs; base64 in the API). */
  digest: Uint8Array;
  digestAlgorithm: DigestAlgorithm;
  certificate: Uint8Array;
  chain: Uint8Array[];
  keyAlgorithm: KeyAlgorithm;
  fieldName: string;
  /** The claimed signing time written as /M (ISO 8601). */
  signingTime: string;
}

export interface PreparedSignatureStateJson {
  byteRange: ByteRange;
  signedAttributes: string;
  digest: string;
  digestAlgorithm: DigestAlgorithm;
  certificate: string;
  chain: string[];
  keyAlgorithm: KeyAlgorithm;
  fieldName: string;
  signingTime: string;
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'));

/**
 * JSON form of a prepared state (byte arrays as base64).
 *
 * ```ts
 * await sessions.insert({ state: JSON.stringify(preparedStateToJson(prepared.state)) });
 * ```
 */
export function preparedStateToJson(state: PreparedSignatureState): PreparedSignatureStateJson {
  return {
    ...state,
    signedAttributes: b64(state.signedAttributes),
    digest: b64(state.digest),
    certificate: b64(state.certificate),
    chain: state.chain.map(b64),
  };
}

/**
 * The inverse of `preparedStateToJson`.
 *
 * ```ts
 * const prepared = preparedStateFromJson(JSON.parse(session.state) as PreparedSignatureStateJson);
 * ```
 */
export function preparedStateFromJson(json: PreparedSignatureStateJson): PreparedSignatureState {
  return {
    ...json,
    byteRange: [...json.byteRange],
    signedAttributes: bytes(json.signedAttributes),
    digest: bytes(json.digest),
    certificate: bytes(json.certificate),
    chain: json.chain.map(bytes),
  };
}
