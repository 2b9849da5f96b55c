/**
 * Where the page keeps a recipient session (Contract: POST /share/unlock answers one; the link of a
 * protected share stays locked): in sessionStorage, so it lasts as long as the tab and no longer, and
 * is never shared with another tab or written to disk for good. It is filed under a digest of the
 * link, so the link itself is not stored and another link opened in the same tab does not pick it up.
 * Without storage (or without WebCrypto) it lives in memory only: a reload asks to unlock again.
 */

const KEY = 'signery.recipientSession';

export interface SessionStore {
  load(): string | undefined;
  save(token: string | undefined): void;
}

async function digest(link: string): Promise<string | undefined> {
  try {
    const bytes = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(link));
    return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
  } catch {
    return undefined;
  }
}

export async function sessionStoreFor(link: string): Promise<SessionStore> {
  const owner = await digest(link);
  return {
    load() {
      if (!owner) return undefined;
      try {
        const kept = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as {
          for: string;
          token: string;
        } | null;
        return kept?.for === owner ? kept.token : undefined;
      } catch {
        return undefined;
      }
    },
    save(token) {
      if (!owner) return;
      try {
        if (token) sessionStorage.setItem(KEY, JSON.stringify({ for: owner, token }));
        else sessionStorage.removeItem(KEY);
      } catch {
        // No storage: the session lives in memory only.
      }
    },
  };
}
