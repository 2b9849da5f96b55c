import { isSealed, seal, unseal } from '../store/secret-box.js';

/**
 * Download tickets for FILES_PUBLIC_URL (DESIGN, "Files answered to a browser": "serves downloads
 * from a separate origin, as large platforms do for user content"). The API checks the caller's
 * rights, then answers 303 to `FILES_PUBLIC_URL/f/<ticket>/<name>`; the ticket is the only authority
 * there. It names one stored file (its record and the digest of its bytes) and how it is answered,
 * is sealed (AES-256-GCM under SECRET_KEY, secret-box.ts) so it can be neither forged nor read, and
 * lasts TICKET_SECONDS: long enough to follow a redirect, too short to be worth keeping. It is no
 * credential of anyone's account: it opens those bytes and nothing else, and it is refused once the
 * file record is gone (a hard delete).
 *
 * ```ts
 * const ticket = issueFileTicket({ tenantId, fileId, sha256, disposition: 'attachment' }, now);
 * readFileTicket(ticket, now); // { tenantId, fileId, sha256, disposition } or undefined
 * ```
 */

/** How long a ticket opens its file. */
export const TICKET_SECONDS = 300;

export interface FileTicket {
  tenantId: string;
  fileId: string;
  sha256: string;
  disposition: 'inline' | 'attachment';
}

interface Sealed {
  t: string;
  f: string;
  h: string;
  d: 'i' | 'a';
  /** Expiry, in seconds since the epoch. */
  e: number;
}

/** `sealed:v1:<key>:<iv>:<text>:<tag>` in one URL path segment: the colons become dots. */
export function issueFileTicket(file: FileTicket, now: Date): string {
  const value: Sealed = {
    t: file.tenantId,
    f: file.fileId,
    h: file.sha256,
    d: file.disposition === 'inline' ? 'i' : 'a',
    e: Math.floor(now.getTime() / 1000) + TICKET_SECONDS,
  };
  return seal(value).replaceAll(':', '.');
}

/** What the ticket opens, while it lasts; undefined for anything forged, altered, foreign or expired. */
export function readFileTicket(ticket: string, now: Date): FileTicket | undefined {
  const sealed = ticket.replaceAll('.', ':');
  if (!isSealed(sealed)) return undefined;
  let value: unknown;
  try {
    value = unseal(sealed);
  } catch {
    return undefined;
  }
  if (!isTicket(value) || value.e * 1000 <= now.getTime()) return undefined;
  return {
    tenantId: value.t,
    fileId: value.f,
    sha256: value.h,
    disposition: value.d === 'i' ? 'inline' : 'attachment',
  };
}

function isTicket(value: unknown): value is Sealed {
  if (typeof value !== 'object' || value === null) return false;
  const { t, f, h, d, e } = value as Record<string, unknown>;
  return (
    typeof t === 'string' &&
    typeof f === 'string' &&
    typeof h === 'string' &&
    (d === 'i' || d === 'a') &&
    typeof e === 'number'
  );
}
