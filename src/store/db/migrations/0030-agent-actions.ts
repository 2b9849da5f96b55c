import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { addColumns, createTables } from './frozen/ddl.js';

/**
 * Agents (issue 42): what an AI agent asked to do that waits for a person, and the keys agents hold.
 * - `auth_tokens.agent`: 1 for a key made for an agent (it never approves, and outside /mcp it only
 *   reads); `auth_tokens.read_only`: 1 for a key that only reads (every write tool is refused).
 * - `agent_actions`: one consequential act an agent proposed (`tool`, its exact `request`, on
 *   `document_id`), by the key `key_id` of the user `created_by_user_id`; `state` pending until a
 *   person approves (then executed with the approver as actor), rejects it, or `expires_at` passes.
 */
export function agentActions(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await addColumns(db, d, 'auth_tokens', { agent: 'integer not null default 0' });
      await addColumns(db, d, 'auth_tokens', { read_only: 'integer not null default 0' });
      await createTables(db, d, {
        agent_actions: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            organization_id: 'text not null',
            document_id: 'text not null',
            tool: 'text not null',
            request: 'json not null',
            state: 'text not null',
            key_id: 'text not null',
            key_prefix: 'text not null',
            created_by_user_id: 'text not null',
            created_by: 'text not null',
            created_at: 'timestamp not null',
            expires_at: 'timestamp not null',
            decided_by: 'text',
            decided_at: 'timestamp',
            outcome: 'json',
          },
          indexes: {
            agent_actions_tenant: ['tenant_id', 'created_at'],
            agent_actions_document: ['document_id'],
          },
        },
      });
    },
  };
}
