import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

// Algorithm.Argon2id of @node-rs/argon2 (an ambient const enum, which isolated modules cannot read).
const ARGON2ID = 2;

/** A 256-bit random token, URL-safe (session tokens, activation tokens). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Tokens and keys are stored as their SHA-256: they carry 256 bits of randomness, so a fast hash is
 * enough and keeps authentication to one indexed lookup. Passwords, which carry little, use argon2id.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** An API key: `sgy_<public prefix>_<secret>`; the prefix is what listings show and DELETE accepts. */
export function newApiKey(): { key: string; prefix: string } {
  const prefix = `sgy_${randomBytes(6).toString('hex')}`;
  return { key: `${prefix}_${randomBytes(32).toString('base64url')}`, prefix };
}

export function apiKeyPrefix(value: string): string | undefined {
  const match = /^(sgy_[0-9a-f]{12})(?:_[A-Za-z0-9_-]{43})?$/.exec(value);
  return match?.[1];
}

export function isApiKey(value: string): boolean {
  return /^sgy_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/.test(value);
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID });
}

export function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  return verify(passwordHash, password);
}

// Verified against when the account does not exist, so that "no such user" costs as long as
// "wrong password" and timing does not reveal which names exist.
let dummyHash: Promise<string> | undefined;
export function verifyAgainstDummy(password: string): Promise<boolean> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return dummyHash.then((h) => verify(h, password));
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A recovery code like `k7m2p-x9qa4`: about 49 bits, typed by hand, used once. */
export function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

export function normalizeRecoveryCode(code: string): string {
  return code.trim().toLowerCase().replace(/\s+/g, '');
}
