import type { Json } from './schema.js';

/** Reads a JSON column: PostgreSQL's jsonb arrives parsed, SQLite's text does not. */
export function readJson<T>(value: Json | null | undefined, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  if (typeof value === 'string') return JSON.parse(value) as T;
  return value as T;
}

/** Writes a JSON column the same way on both dialects (jsonb accepts JSON text). */
export function writeJson(value: unknown): string {
  return JSON.stringify(value);
}
