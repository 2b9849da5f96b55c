import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Secrets at rest (DESIGN, Decided this round): "a queued mail that must carry a link keeps it
 * encrypted with a key derived from SECRET_KEY (generated under DATA_DIR when unset) and drops it once
 * sent". What must be kept readable for a while (a queued message with a share link or a one-time
 * code) is sealed with AES-256-GCM under a key derived from SECRET_KEY by HKDF-SHA256; the sealed text
 * names its key by a fingerprint, so a node given another SECRET_KEY says so instead of sending
 * garbage. The process keeps every key it was given (several servers of a test share one process):
 * sealing uses the latest, opening finds the one named.
 *
 * ```ts
 * useSecretKey(await loadSecretKey(config));
 * const sealed = seal({ to, text });   // 'sealed:v1:<key id>:<iv>:<ciphertext>:<tag>'
 * unseal(sealed);                      // { to, text }
 * ```
 */

const PREFIX = 'sealed:v1:';
const KEY_FILE = 'secret-key';
const keyring = new Map<string, Buffer>();
let current: { id: string; key: Buffer } | undefined;

export class SecretKeyMissing extends Error {
  override name = 'SecretKeyMissing';
}

/**
 * SECRET_KEY, or the key kept in DATA_DIR/secret-key, made (32 random bytes, mode 0600) the first time.
 * Several nodes sharing one database must be given the same SECRET_KEY.
 */
export async function loadSecretKey(config: {
  secretKey: string | undefined;
  dataDir: string;
}): Promise<string> {
  if (config.secretKey) return config.secretKey;
  const file = join(config.dataDir, KEY_FILE);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(config.dataDir, { recursive: true });
  const made = randomBytes(32).toString('base64url');
  try {
    // `wx`: another process starting at the same moment may have made it first; then theirs is used.
    await writeFile(file, `${made}\n`, { flag: 'wx', mode: 0o600 });
    return made;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return (await readFile(file, 'utf8')).trim();
  }
}

/** Derives the sealing key from `secret` and makes it the one new seals use. */
export function useSecretKey(secret: string): void {
  const key = Buffer.from(hkdfSync('sha256', secret, 'signery', 'queued secrets v1', 32));
  const id = createHash('sha256').update(key).digest('hex').slice(0, 16);
  keyring.set(id, key);
  current = { id, key };
}

/** `value` as JSON, encrypted and authenticated under the current key. */
export function seal(value: unknown): string {
  if (!current) throw new SecretKeyMissing('No secret key is loaded (useSecretKey)');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', current.key, iv);
  const text = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return `${PREFIX}${current.id}:${[iv, text, cipher.getAuthTag()].map((b) => b.toString('base64url')).join(':')}`;
}

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

/** What `seal` sealed; throws when the key it names is not this process's or the text was altered. */
export function unseal(sealed: string): unknown {
  const [id, iv, text, tag] = sealed.slice(PREFIX.length).split(':');
  const key = id === undefined ? undefined : keyring.get(id);
  if (!key || iv === undefined || text === undefined || tag === undefined) {
    throw new SecretKeyMissing(
      'This was sealed with another SECRET_KEY: give every node sharing the database the same SECRET_KEY',
    );
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plain = Buffer.concat([decipher.update(Buffer.from(text, 'base64url')), decipher.final()]);
  return JSON.parse(plain.toString('utf8')) as unknown;
}
