import type { Database } from '../store/db/schema.js';

type PrimaryKey<T extends keyof Database> = readonly (keyof Database[T] & string)[];

/**
 * Every table of the schema with its primary key, in an order where each table comes after the
 * tables its foreign keys point to (organizations and users after tenants, webhook deliveries after
 * webhooks and events, attempts after deliveries): copies insert in this order, deletes go backwards.
 * A table added to schema.ts without an entry here does not compile, so no operation can forget one.
 */
export const TABLES = {
  tenants: ['id'],
  organizations: ['id'],
  users: ['id'],
  auth_tokens: ['id'],
  recovery_codes: ['id'],
  activation_tokens: ['token_hash'],
  login_failures: ['key'],
  audit_log: ['seq'],
  audit_heads: ['tenant_id'],
  scroll_contexts: ['id'],
  files: ['id'],
  documents: ['id'],
  document_attachments: ['document_id', 'file_id'],
  document_revisions: ['document_id', 'revision'],
  templates: ['id'],
  drafts: ['id'],
  definitions: ['tenant_id', 'name'],
  workflows: ['tenant_id', 'name'],
  shares: ['id'],
  stamps: ['id'],
  user_certificates: ['id'],
  signing_sessions: ['id'],
  contacts: ['id'],
  enums: ['id'],
  jobs: ['id'],
  job_lanes: ['key'],
  events: ['id'],
  webhooks: ['id'],
  webhook_deliveries: ['id'],
  webhook_attempts: ['id'],
  oidc_login_states: ['state_hash'],
  oidc_identities: ['provider', 'subject'],
  share_oidc_states: ['state_hash'],
  recipient_sessions: ['id'],
  share_links: ['token_hash'],
  dev_pki: ['name'],
  rate_limit_windows: ['bucket', 'window_start_ms'],
  agent_actions: ['id'],
} as const satisfies { [T in keyof Database]: PrimaryKey<T> };

export type TableName = keyof Database;

/** The tables in foreign-key order (see TABLES). */
export const TABLE_ORDER = Object.keys(TABLES) as TableName[];

/** A table's primary key columns. */
export function primaryKey(table: TableName): readonly string[] {
  return TABLES[table];
}
