import {
  X509Certificate,
  createDecipheriv,
  createHmac,
  createPrivateKey,
  pbkdf2Sync,
  timingSafeEqual,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { Pkcs12Invalid } from '../errors.js';
import {
  childAt,
  childrenOf,
  integerOf,
  isContext,
  octetsOf,
  oidOf,
  originalBytes,
  parseDer,
  type Asn1,
} from '../der.js';
import { bmpPassword, pkcs12Kdf } from './pkcs12-kdf.js';
import { rc2CbcDecrypt } from './rc2.js';

export interface ReadPkcs12Options {
  p12: Uint8Array;
  password: string;
}

export interface Pkcs12Contents {
  privateKey: KeyObject;
  /** The certificate of the private key (DER). */
  certificate: Uint8Array;
  /** The other certificates of the file (DER), issuer order: nearest first. */
  chain: Uint8Array[];
}

const BAG = {
  key: '1.2.840.113549.1.12.10.1.1',
  shroudedKey: '1.2.840.113549.1.12.10.1.2',
  cert: '1.2.840.113549.1.12.10.1.3',
} as const;
const X509_CERT = '1.2.840.113549.1.9.22.1';
const DATA = '1.2.840.113549.1.7.1';
const ENCRYPTED_DATA = '1.2.840.113549.1.7.6';
const PBES2 = '1.2.840.113549.1.5.13';
const PBKDF2 = '1.2.840.113549.1.5.12';

// RFC 7292 appendix C: the legacy password-based ciphers, key length in bytes.
const LEGACY_PBE: Record<string, { cipher: 'des-ede3-cbc' | 'rc2'; keyLength: number; bits?: number }> = {
  '1.2.840.113549.1.12.1.3': { cipher: 'des-ede3-cbc', keyLength: 24 },
  '1.2.840.113549.1.12.1.5': { cipher: 'rc2', keyLength: 16, bits: 128 },
  '1.2.840.113549.1.12.1.6': { cipher: 'rc2', keyLength: 5, bits: 40 },
};
const PBES2_CIPHERS: Record<string, { name: string; keyLength: number }> = {
  '2.16.840.1.101.3.4.1.2': { name: 'aes-128-cbc', keyLength: 16 },
  '2.16.840.1.101.3.4.1.22': { name: 'aes-192-cbc', keyLength: 24 },
  '2.16.840.1.101.3.4.1.42': { name: 'aes-256-cbc', keyLength: 32 },
  '1.2.840.113549.3.7': { name: 'des-ede3-cbc', keyLength: 24 },
};
const HMAC_PRF: Record<string, string> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.8': 'sha224',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};
const MAC_DIGESTS: Record<string, 'sha1' | 'sha256' | 'sha384' | 'sha512'> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/**
 * Reads a PKCS#12 (.p12/.pfx) file in pure JS (no openssl at run time): checks the password with the
 * file's MAC, decrypts the key and certificate bags (PBES2/AES as OpenSSL 3 writes them, and the
 * legacy 3DES and RC2 ciphers of older exports), and returns the key with its certificate and chain.
 *
 * ```ts
 * const { privateKey, certificate, chain } = readPkcs12({ p12: await readFile(path), password });
 * ```
 */
export function readPkcs12(options: ReadPkcs12Options): Pkcs12Contents {
  try {
    return read(options);
  } catch (error) {
    if (error instanceof Pkcs12Invalid) throw error;
    throw new Pkcs12Invalid(
      `The PKCS#12 file cannot be read (${error instanceof Error ? error.message : 'unknown'})`,
    );
  }
}

function read({ p12, password }: ReadPkcs12Options): Pkcs12Contents {
  const pfx = parseDer(p12, 'PKCS#12');
  const authSafe = childAt(pfx, 1, 'authSafe');
  if (oidOf(childAt(authSafe, 0, 'authSafe type'), 'authSafe type') !== DATA) {
    throw new Pkcs12Invalid('Only password-integrity PKCS#12 files are supported');
  }
  const authSafeOctets = octetsOf(childAt(childAt(authSafe, 1, 'authSafe content'), 0, 'authSafe content'));
  const macData = childrenOf(pfx)[2];
  if (macData) checkMac(macData, authSafeOctets, password);

  const keys: Uint8Array[] = [];
  const certificates: Uint8Array[] = [];
  for (const contentInfo of childrenOf(parseDer(authSafeOctets, 'AuthenticatedSafe'))) {
    const type = oidOf(childAt(contentInfo, 0, 'content type'), 'content type');
    const content = childAt(childAt(contentInfo, 1, 'content'), 0, 'content');
    let safeContents: Uint8Array;
    if (type === DATA) safeContents = octetsOf(content);
    else if (type === ENCRYPTED_DATA) {
      const encryptedContentInfo = childAt(content, 1, 'encryptedContentInfo');
      const algorithm = childAt(encryptedContentInfo, 1, 'content encryption algorithm');
      const encrypted = childrenOf(encryptedContentInfo).find((node) => isContext(node, 0));
      if (!encrypted) continue;
      safeContents = decrypt(algorithm, octetsOf(encrypted), password);
    } else continue;
    readBags(parseDer(safeContents, 'SafeContents'), password, keys, certificates);
  }
  const pkcs8 = keys[0];
  if (!pkcs8) throw new Pkcs12Invalid('The PKCS#12 file holds no private key');
  const privateKey = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' });
  const parsed = certificates.map((der) => ({ der, x509: new X509Certificate(der) }));
  const own = parsed.find((c) => c.x509.checkPrivateKey(privateKey));
  if (!own) throw new Pkcs12Invalid('The PKCS#12 file holds no certificate for its private key');
  return {
    privateKey,
    certificate: own.der,
    chain: orderChain(
      own.x509,
      parsed.filter((c) => c !== own),
    ),
  };
}

function readBags(
  safeContents: Asn1,
  password: string,
  keys: Uint8Array[],
  certificates: Uint8Array[],
): void {
  for (const bag of childrenOf(safeContents)) {
    const bagId = oidOf(childAt(bag, 0, 'bag id'), 'bag id');
    const value = childAt(childAt(bag, 1, 'bag value'), 0, 'bag value');
    if (bagId === BAG.key) keys.push(originalBytes(value));
    else if (bagId === BAG.shroudedKey) {
      keys.push(decrypt(childAt(value, 0, 'key algorithm'), octetsOf(childAt(value, 1, 'key')), password));
    } else if (bagId === BAG.cert) {
      if (oidOf(childAt(value, 0, 'cert type'), 'cert type') !== X509_CERT) continue;
      certificates.push(octetsOf(childAt(childAt(value, 1, 'cert'), 0, 'cert')));
    }
  }
}

function checkMac(macData: Asn1, content: Uint8Array, password: string): void {
  const digestInfo = childAt(macData, 0, 'mac');
  const algorithm = oidOf(
    childAt(childAt(digestInfo, 0, 'mac algorithm'), 0, 'mac algorithm'),
    'mac algorithm',
  );
  const expected = octetsOf(childAt(digestInfo, 1, 'mac value'));
  const salt = octetsOf(childAt(macData, 1, 'mac salt'));
  const iterationsNode = childrenOf(macData)[2];
  const iterations = iterationsNode ? integerOf(iterationsNode, 'mac iterations') : 1;
  const hash = MAC_DIGESTS[algorithm];
  // PBMAC1 (RFC 9579) and exotic digests: the decryption padding check below still rejects a wrong password.
  if (!hash) return;
  const key = pkcs12Kdf({
    password: bmpPassword(password),
    salt,
    iterations,
    id: 3,
    length: expected.length,
    hash,
  });
  const actual = createHmac(hash, key).update(content).digest();
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new Pkcs12Invalid('Wrong PKCS#12 password (integrity check failed)');
  }
}

function decrypt(algorithm: Asn1, data: Uint8Array, password: string): Uint8Array {
  const oid = oidOf(childAt(algorithm, 0, 'algorithm'), 'algorithm');
  const params = childAt(algorithm, 1, 'algorithm parameters');
  if (oid === PBES2) return decryptPbes2(params, data, password);
  const legacy = LEGACY_PBE[oid];
  if (!legacy) throw new Pkcs12Invalid(`Unsupported PKCS#12 cipher ${oid}`);
  const salt = octetsOf(childAt(params, 0, 'salt'));
  const iterations = integerOf(childAt(params, 1, 'iterations'), 'iterations');
  const derive = (id: 1 | 2, length: number): Uint8Array =>
    pkcs12Kdf({ password: bmpPassword(password), salt, iterations, id, length, hash: 'sha1' });
  const key = derive(1, legacy.keyLength);
  const iv = derive(2, 8);
  if (legacy.cipher === 'rc2') {
    const plain = rc2CbcDecrypt({ key, effectiveBits: legacy.bits ?? 128, iv, data });
    if (!plain) throw new Pkcs12Invalid('Wrong PKCS#12 password');
    return plain;
  }
  return decipher(legacy.cipher, key, iv, data);
}

function decryptPbes2(params: Asn1, data: Uint8Array, password: string): Uint8Array {
  const kdf = childAt(params, 0, 'key derivation');
  const scheme = childAt(params, 1, 'encryption scheme');
  if (oidOf(childAt(kdf, 0, 'kdf'), 'kdf') !== PBKDF2)
    throw new Pkcs12Invalid('Unsupported PBES2 key derivation');
  const kdfParams = childrenOf(childAt(kdf, 1, 'PBKDF2 parameters'));
  const salt = octetsOf(kdfParams[0]!);
  const iterations = integerOf(kdfParams[1]!, 'iterations');
  // keyLength is optional; the PRF (default HMAC-SHA1) is the last element when present.
  const prfNode = kdfParams.find((node, index) => index >= 2 && childrenOf(node).length > 0);
  const prf = prfNode ? HMAC_PRF[oidOf(childAt(prfNode, 0, 'prf'), 'prf')] : 'sha1';
  if (!prf) throw new Pkcs12Invalid('Unsupported PBKDF2 pseudo-random function');
  const cipherOid = oidOf(childAt(scheme, 0, 'cipher'), 'cipher');
  const cipher = PBES2_CIPHERS[cipherOid];
  if (!cipher) throw new Pkcs12Invalid(`Unsupported PBES2 cipher ${cipherOid}`);
  const iv = octetsOf(childAt(scheme, 1, 'iv'));
  const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, cipher.keyLength, prf);
  return decipher(cipher.name, key, iv, data);
}

function decipher(name: string, key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
  try {
    const d = createDecipheriv(name, key, iv);
    return new Uint8Array(Buffer.concat([d.update(data), d.final()]));
  } catch {
    throw new Pkcs12Invalid('Wrong PKCS#12 password');
  }
}

/** Orders the other certificates as a chain upwards from the signer's; strays go last. */
function orderChain(
  leaf: X509Certificate,
  others: { der: Uint8Array; x509: X509Certificate }[],
): Uint8Array[] {
  const ordered: Uint8Array[] = [];
  const left = [...others];
  let current = leaf;
  for (;;) {
    const index = left.findIndex(
      (c) => current.checkIssued(c.x509) && c.x509.fingerprint256 !== current.fingerprint256,
    );
    if (index === -1) break;
    const [next] = left.splice(index, 1);
    ordered.push(next!.der);
    current = next!.x509;
  }
  return [...ordered, ...left.map((c) => c.der)];
}
