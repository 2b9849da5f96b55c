import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { DatabaseHandle, SqlDialect } from './dialect.js';
import type { Database } from './schema.js';
import { foundation } from './migrations/0001-foundation.js';
import { files } from './migrations/0002-files.js';
import { documents } from './migrations/0003-documents.js';
import { jobsWebhooks } from './migrations/0004-jobs-webhooks.js';
import { sharing } from './migrations/0005-sharing.js';
import { stamps } from './migrations/0006-stamps.js';
import { twoStep } from './migrations/0007-two-step.js';
import { contactsEnums } from './migrations/0009-contacts-enums.js';
import { searchAudit } from './migrations/0008-search-audit.js';
import { oidc } from './migrations/0010-oidc.js';
import { sharingQuorum } from './migrations/0011-sharing-quorum.js';
import { recipientSessions } from './migrations/0012-recipient-sessions.js';
import { devPki } from './migrations/0013-dev-pki.js';
import { rateLimits } from './migrations/0014-rate-limits.js';
import { archiveRenewal } from './migrations/0022-archive-renewal.js';
import { eventFeed } from './migrations/0023-event-feed.js';
import { fileReferenceIndexes } from './migrations/0024-file-reference-indexes.js';
import { shareLinksPerShare } from './migrations/0025-share-links-per-share.js';
import { totpStepMemory } from './migrations/0026-totp-step-memory.js';
import { webhookHolders } from './migrations/0027-webhook-holders.js';
import { scrollTimeoutMs } from './migrations/0028-scroll-timeout-ms.js';
import { shareGroups } from './migrations/0029-share-groups.js';
import { agentActions } from './migrations/0030-agent-actions.js';
import { fileRepairs } from './migrations/0018-file-repairs.js';
import { webhookRotation } from './migrations/0021-webhook-rotation.js';

/**
 * The one migration set, in order, for both dialects. Names never change once released, nor does what
 * a released migration creates (test/store/migrations-frozen.test.ts pins it).
 */
export function migrations(dialect: SqlDialect): Record<string, Migration> {
  return {
    '0001-foundation': foundation(dialect),
    '0002-files': files(dialect),
    '0003-documents': documents(dialect),
    '0004-jobs-webhooks': jobsWebhooks(dialect),
    '0005-sharing': sharing(dialect),
    '0006-stamps': stamps(dialect),
    '0007-two-step': twoStep(dialect),
    '0009-contacts-enums': contactsEnums(dialect),
    '0008-search-audit': searchAudit(dialect),
    '0010-oidc': oidc(dialect),
    '0011-sharing-quorum': sharingQuorum(dialect),
    '0012-recipient-sessions': recipientSessions(dialect),
    '0013-dev-pki': devPki(dialect),
    '0014-rate-limits': rateLimits(dialect),
    '0018-file-repairs': fileRepairs(dialect),
    '0021-webhook-rotation': webhookRotation(dialect),
    '0022-archive-renewal': archiveRenewal(dialect),
    '0023-event-feed': eventFeed(dialect),
    '0024-file-reference-indexes': fileReferenceIndexes(),
    '0025-share-links-per-share': shareLinksPerShare(dialect),
    '0026-totp-step-memory': totpStepMemory(dialect),
    '0027-webhook-holders': webhookHolders(dialect),
    '0028-scroll-timeout-ms': scrollTimeoutMs(dialect),
    '0029-share-groups': shareGroups(dialect),
    '0030-agent-actions': agentActions(dialect),
  };
}

export class MigrationFailed extends Error {
  override name = 'MigrationFailed';
}

/** Applies every pending migration; on PostgreSQL Kysely takes an advisory lock so nodes can start together. */
export async function migrateToLatest(handle: DatabaseHandle<Database>): Promise<string[]> {
  // Its check for its own tables reads only our schema (SchemaIntrospector): another instance
  // dropping its schema at that moment cannot fail it.
  const result: MigrationResultSet = await migratorOf(handle).migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationFailed(
      `migration ${failed} failed: ${result.error instanceof Error ? result.error.message : JSON.stringify(result.error)}`,
      { cause: result.error },
    );
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * The migrations of this release that `handle` has not applied, without applying them: `signery
 * migrate-store` and `restore` read databases they must not change.
 */
export async function pendingMigrations(handle: DatabaseHandle<Database>): Promise<string[]> {
  const known = await migratorOf(handle).getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

function migratorOf(handle: DatabaseHandle<Database>): Migrator {
  const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations(handle.dialect)) };
  return new Migrator({
    db: handle.db,
    provider,
    // Named explicitly: left unset, Kysely looks for its lock table in every schema and may find
    // another instance's, then fail to lock in ours.
    migrationTableSchema: handle.schema,
    // Capabilities are built in parallel and their migrations may land out of name order: a database
    // that already applied 0004 must still accept 0003 when it arrives. Migrations touch only their
    // own tables, so running them in the order they reach a database is safe.
    allowUnorderedMigrations: true,
  });
}
