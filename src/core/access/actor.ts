import type { Right, Role } from './roles.js';

/** Who is calling: resolved from the session token or API key once per request. */
export interface Actor {
  userId: string;
  name: string;
  tenantId: string;
  tenantName: string;
  organizationId: string;
  role: Role;
  rights: ReadonlySet<Right>;
  tokenId: string;
  tokenKind: 'session' | 'api_key';
  unlocked: boolean;
  requestId: string;
  /** An API key made for an AI agent: it never approves, and outside /mcp it only reads (issue 42). */
  agent?: boolean;
  /** An API key that only reads: every write is refused, on /mcp and off it. */
  readOnly?: boolean;
}
