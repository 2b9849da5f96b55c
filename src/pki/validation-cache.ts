import { createHash, X509Certificate } from 'node:crypto';

/**
 * What validating the certificate chains of one file parses and checks again and again, done once.
 * The signatures of a document share their signer's chain and their TSA's, and each chain is checked
 * against the same CRLs and OCSP responses (its DSS): the ten signatures of a sealed document made
 * thirty chain validations, each of which parsed every certificate, CRL and OCSP response anew and
 * verified their signatures again (most of a 10-signature verification's time). Results are keyed by
 * the bytes they were computed from, whatever array holds them, so they cannot differ from computing
 * them again. One cache serves one verification and goes with it; answers that depend on nothing but
 * bytes are also kept for the next verifications (`rememberAcross`).
 *
 * ```ts
 * const cache = new ValidationCache();
 * const chain = await validateCertificateChain({ certificate, intermediates, trustAnchors, at, cache });
 * ```
 */
export class ValidationCache {
  readonly #ids = new WeakMap<Uint8Array, number>();
  readonly #idsByContent = new Map<string, number>();
  readonly #certificates = new Map<number, X509Certificate>();
  readonly #results = new Map<string, unknown>();

  /** The certificate parsed (node's X509Certificate); throws for bytes that are not one, every time. */
  certificate(der: Uint8Array): X509Certificate {
    const id = this.#id(der);
    let certificate = this.#certificates.get(id);
    if (!certificate) {
      certificate = new X509Certificate(der);
      this.#certificates.set(id, certificate);
    }
    return certificate;
  }

  /**
   * What `compute` answers for these inputs, computed the first time they are asked for (a promise is
   * kept as it is: later callers await the same one). `kind` names the computation.
   */
  remember<T>(kind: string, inputs: Uint8Array[], compute: () => T): T {
    const key = `${kind}:${inputs.map((bytes) => this.#id(bytes)).join(',')}`;
    if (this.#results.has(key)) return this.#results.get(key) as T;
    const value = compute();
    this.#results.set(key, value);
    return value;
  }

  /**
   * As `remember`, for a computation that depends on nothing but its inputs' bytes (not the time of
   * validation, not the trust anchors): its answer is also kept for the verifications that follow, in
   * memory shared by the process (ACROSS_MAX answers at most; past that it starts again). The next
   * verification of a document signed by the same signers, with the same revocation answers in its
   * DSS, does not parse and check those answers again (they were most of its time). Callers never
   * mutate what it answers. A promise that rejects is not kept.
   */
  rememberAcross<T>(kind: string, inputs: Uint8Array[], compute: () => T): T {
    return this.remember(kind, inputs, () => {
      const key = `${kind}:${inputs.map(contentKey).join(':')}`;
      if (across.has(key)) return across.get(key) as T;
      const value = compute();
      if (across.size >= ACROSS_MAX) across.clear();
      across.set(key, value);
      // Forgotten if it rejects, unless the memory has started again and holds another answer by then.
      if (value instanceof Promise) value.catch(() => across.get(key) === value && across.delete(key));
      return value;
    });
  }

  /** A number per distinct content: arrays holding the same bytes get the same one. */
  #id(bytes: Uint8Array): number {
    let id = this.#ids.get(bytes);
    if (id === undefined) {
      const content = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
      id = this.#idsByContent.get(content);
      if (id === undefined) {
        id = this.#idsByContent.size;
        this.#idsByContent.set(content, id);
      }
      this.#ids.set(bytes, id);
    }
    return id;
  }
}

const ACROSS_MAX = 1_000;
/** ValidationCache.rememberAcross's answers, by computation and inputs' SHA-256. */
const across = new Map<string, unknown>();

function contentKey(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64');
}
