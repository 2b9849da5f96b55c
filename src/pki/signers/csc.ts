import { createHash, X509Certificate } from 'node:crypto';
import { digestOid, nodeHashName, OID, type DigestAlgorithm } from '../algorithms.js';
import { SignerUnavailable } from '../errors.js';
import type { KeyAlgorithm, SignOptions, Signer } from './signer.js';

/**
 * A remote signing service speaking the Cloud Signature Consortium API v2 (a QTSP's or an HSM
 * vendor's), reached with OAuth2 client credentials. `serviceUrl` is the base the CSC methods hang
 * from (`…/csc/v2`); `tokenUrl` the OAuth2 token endpoint, by default the one the service's `info`
 * names (`oauth2` + `/oauth2/token`).
 */
export interface CscOptions {
  serviceUrl: string;
  clientId: string;
  clientSecret: string;
  tokenUrl?: string | undefined;
  /** The credential (key and certificate) to sign with; by default the only one `credentials/list` gives. */
  credentialId?: string | undefined;
  /** The credential's PIN, for a credential whose `authMode` is `explicit`. */
  pin?: string | undefined;
  /** Time-out of each call to the service. */
  timeoutMs?: number | undefined;
}

/** What `credentials/info` tells of a credential (CSC API v2, 11.5), the part a signer needs. */
interface CredentialInfo {
  key: { status: string; algo: string[] };
  cert: { status?: string; certificates?: string[] };
  authMode?: string;
}

/**
 * The signature algorithm a key signs a digest with, as CSC names it: the combined OID (hash with
 * RSA or ECDSA) when the credential lists it, else the bare key OID with the hash given apart.
 */
const SIGN_ALGORITHMS: Record<KeyAlgorithm, Record<DigestAlgorithm, string>> = {
  RSA: { 'SHA-256': OID.sha256WithRsa, 'SHA-384': OID.sha384WithRsa, 'SHA-512': OID.sha512WithRsa },
  ECDSA: { 'SHA-256': OID.ecdsaWithSha256, 'SHA-384': OID.ecdsaWithSha384, 'SHA-512': OID.ecdsaWithSha512 },
};
const KEY_OIDS: Record<KeyAlgorithm, string> = { RSA: OID.rsaEncryption, ECDSA: OID.ecPublicKey };

/**
 * Opens a CSC credential as a `Signer`: a token by client credentials, the credential
 * (`credentials/list` when none is configured), its certificate chain (`credentials/info`), checked
 * to be enabled and valid. Each signature then hashes the signed attributes here and sends only the
 * hash: `credentials/authorize` for that hash (with the PIN when the credential asks for one, SCAL 2
 * binds the authorisation to the hash) and `signatures/signHash` with the activation data it gave.
 * Every failure of the service is `SignerUnavailable` (503) naming the method and what it said: a
 * signature cannot fall back to another key.
 *
 * ```ts
 * const signer = await openCscSigner({ serviceUrl: 'https://rssp.example/csc/v2', clientId, clientSecret });
 * ```
 */
export async function openCscSigner(options: CscOptions): Promise<Signer> {
  const csc = cscClient(options);
  const credentialID = options.credentialId ?? (await onlyCredential(csc));
  const info = await csc.call<CredentialInfo>('credentials/info', {
    credentialID,
    certificates: 'chain',
    certInfo: false,
    authInfo: true,
  });
  if (info.key?.status !== 'enabled') {
    throw new SignerUnavailable(`The CSC credential ${credentialID} is ${info.key?.status ?? 'not usable'}`);
  }
  if (info.cert?.status && info.cert.status !== 'valid') {
    throw new SignerUnavailable(`The certificate of CSC credential ${credentialID} is ${info.cert.status}`);
  }
  const [certificate, ...chain] = (info.cert?.certificates ?? []).map((b64) => Buffer.from(b64, 'base64'));
  if (!certificate) throw new SignerUnavailable(`The CSC credential ${credentialID} has no certificate`);
  const keyAlgorithm = keyAlgorithmOfCertificate(certificate);
  const explicit = info.authMode === 'explicit';
  if (explicit && !options.pin) {
    throw new SignerUnavailable(`The CSC credential ${credentialID} asks for a PIN: set CSC_PIN`);
  }
  return {
    certificate,
    chain,
    keyAlgorithm,
    async sign({ data, digestAlgorithm }: SignOptions): Promise<Uint8Array> {
      const hash = createHash(nodeHashName(digestAlgorithm)).update(data).digest('base64');
      const hashAlgorithmOID = digestOid(digestAlgorithm);
      const combined = SIGN_ALGORITHMS[keyAlgorithm][digestAlgorithm];
      const signAlgo = info.key.algo.includes(combined) ? combined : KEY_OIDS[keyAlgorithm];
      if (!info.key.algo.includes(signAlgo)) {
        throw new SignerUnavailable(
          `The CSC credential ${credentialID} cannot sign with ${digestAlgorithm} (${info.key.algo.join(', ')})`,
        );
      }
      const { SAD } = await csc.call<{ SAD: string }>('credentials/authorize', {
        credentialID,
        numSignatures: 1,
        hashes: [hash],
        hashAlgorithmOID,
        ...(explicit ? { authData: [{ id: 'PIN', value: options.pin }] } : {}),
      });
      const { signatures } = await csc.call<{ signatures: string[] }>('signatures/signHash', {
        credentialID,
        SAD,
        hashes: [hash],
        hashAlgorithmOID,
        signAlgo,
        operationMode: 'S',
      });
      const value = signatures?.[0];
      if (typeof value !== 'string') throw new SignerUnavailable('CSC signatures/signHash gave no signature');
      return new Uint8Array(Buffer.from(value, 'base64'));
    },
  };
}

async function onlyCredential(csc: CscClient): Promise<string> {
  const { credentialIDs } = await csc.call<{ credentialIDs: string[] }>('credentials/list', {});
  if (credentialIDs?.length !== 1) {
    throw new SignerUnavailable(
      `The CSC service lists ${credentialIDs?.length ?? 0} credentials: set CSC_CREDENTIAL_ID to one of them`,
    );
  }
  return credentialIDs[0]!;
}

function keyAlgorithmOfCertificate(der: Uint8Array): KeyAlgorithm {
  const type = new X509Certificate(der).publicKey.asymmetricKeyType;
  if (type === 'rsa') return 'RSA';
  if (type === 'ec') return 'ECDSA';
  throw new SignerUnavailable(`The CSC certificate's key is ${type ?? 'unknown'} (RSA or ECDSA only)`);
}

interface CscClient {
  call<T>(method: string, body: Record<string, unknown>): Promise<T>;
}

/**
 * The service's methods as JSON POSTs with a bearer token, taken by client credentials and taken
 * anew when it is about to expire or the service answers 401.
 */
function cscClient(options: CscOptions): CscClient {
  const base = options.serviceUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  let token: { value: string; until: number } | undefined;

  const post = async (url: string, init: RequestInit, what: string): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(url, { ...init, method: 'POST', signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw new SignerUnavailable(`CSC ${what} failed: ${(error as Error).message}`);
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new SignerUnavailable(`CSC ${what} answered ${response.status} with no JSON`);
    }
    if (!response.ok) {
      const said = body as { error?: unknown; error_description?: unknown };
      const detail = [said.error, said.error_description].filter((s) => typeof s === 'string').join(': ');
      throw Object.assign(
        new SignerUnavailable(`CSC ${what} answered ${response.status}${detail ? ` (${detail})` : ''}`),
        { httpStatus: response.status },
      );
    }
    return body;
  };

  // The service's `info` is asked once, when the first token is taken; later tokens reuse its answer.
  let discovered: string | undefined = options.tokenUrl;
  const tokenUrl = async (): Promise<string> => {
    if (discovered) return discovered;
    const info = (await post(
      `${base}/info`,
      { headers: { 'content-type': 'application/json' }, body: '{}' },
      'info',
    )) as { oauth2?: unknown };
    if (typeof info.oauth2 !== 'string') {
      throw new SignerUnavailable('CSC info names no OAuth2 server: set CSC_TOKEN_URL');
    }
    discovered = `${info.oauth2.replace(/\/+$/, '')}/oauth2/token`;
    return discovered;
  };

  const bearer = async (): Promise<string> => {
    if (token && token.until > Date.now()) return token.value;
    const answer = (await post(
      await tokenUrl(),
      {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: options.clientId,
          client_secret: options.clientSecret,
        }).toString(),
      },
      'oauth2/token',
    )) as { access_token?: unknown; expires_in?: unknown };
    if (typeof answer.access_token !== 'string')
      throw new SignerUnavailable('CSC oauth2/token gave no token');
    const lifetime = typeof answer.expires_in === 'number' ? answer.expires_in : 3600;
    // Taken anew a minute early (or halfway through a short lifetime), never used at its last second.
    token = { value: answer.access_token, until: Date.now() + Math.max(lifetime - 60, lifetime / 2) * 1000 };
    return token.value;
  };

  return {
    async call<T>(method: string, body: Record<string, unknown>): Promise<T> {
      const send = async () =>
        (await post(
          `${base}/${method}`,
          {
            headers: { 'content-type': 'application/json', authorization: `Bearer ${await bearer()}` },
            body: JSON.stringify(body),
          },
          method,
        )) as T;
      try {
        return await send();
      } catch (error) {
        if ((error as { httpStatus?: number }).httpStatus !== 401 || !token) throw error;
        token = undefined;
        return send();
      }
    },
  };
}
