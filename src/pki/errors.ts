import { appError, ValidationError } from '../base/errors.js';

/**
 * Typed errors of the PKI library. The input ones are 400s (`ValidationError`), so the HTTP layer maps
 * them without knowing this module; the others name the service that failed.
 *
 * ```ts
 * try { await finishSignature(...); } catch (error) {
 *   if (error instanceof SignatureValueInvalid) ...; // 400: the client signed something else
 * }
 * ```
 */

/** A certificate, chain or key given to us cannot be read or does not fit together. */
export class CertificateInvalid extends ValidationError {}

/**
 * A raw signature value does not verify with the signer's certificate over the signed attributes
 * (two-step finish with a wrong key or wrong digest). Checked before anything is embedded.
 */
export class SignatureValueInvalid extends ValidationError {}

/** A PKCS#12 file that cannot be opened: wrong password, damaged, or an unsupported cipher. */
export class Pkcs12Invalid extends ValidationError {}

/**
 * The time-stamp authority did not give a usable token (unreachable, refused, or its answer does not
 * match our request). DESIGN: never fake a timestamp; callers fail or fall back and say so.
 */
export class TimestampUnavailable extends appError(502, 'TIMESTAMP_UNAVAILABLE') {}

/** A signing device (PKCS#11 token) or key that is configured but cannot be used. */
export class SignerUnavailable extends appError(503, 'SIGNER_UNAVAILABLE') {}

/**
 * Revocation data (OCSP or CRL) for a certificate of a chain could not be had: no address named, the
 * responder down or refused, an answer that does not verify or is stale. Callers fall back to the level
 * reached without it and say so, as for a failing TSA (a B-LT is never claimed without its evidence).
 */
export class RevocationUnavailable extends appError(502, 'REVOCATION_UNAVAILABLE') {}

/**
 * A certificate of the signer's or the TSA's chain is revoked: nothing is signed with it, and its
 * revocation is never embedded as if it were good. An operator must replace the key or the TSA.
 */
export class CertificateRevoked extends appError(503, 'CERTIFICATE_REVOKED') {}

/**
 * The organisation key's own certificate (or one of its CA certificates) is revoked, as its OCSP
 * responder or CRL says right before signing (issue 38): the key never signs. 503, since no seal can
 * be made until an operator replaces the key; the message names the certificate and the source.
 */
export class SealCertificateRevoked extends appError(503, 'SEAL_CERTIFICATE_REVOKED') {}
