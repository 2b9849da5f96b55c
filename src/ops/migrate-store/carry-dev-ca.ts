import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { readDevCaMaterial, type DevCaMaterial } from '../../pki/dev-ca.js';
import { DevPkiStore } from '../../store/dev-pki-store.js';
import type { Database } from '../../store/db/schema.js';
import { OperationFailed } from '../operation-failed.js';

/**
 * The source's development CA: on SQLite it lives under DATA_DIR/pki (one node per file), while
 * PostgreSQL nodes share the one in the `dev_pki` table (migration 0013). Undefined when the source has
 * none (a seal key is configured, or nothing was ever sealed).
 */
export async function sourceDevCa(db: Kysely<Database>, dataDir: string): Promise<DevCaMaterial | undefined> {
  return (await new DevPkiStore(db).load()) ?? (await readDevCaMaterial(join(dataDir, 'pki')));
}

/**
 * Refuses a target holding another development CA than the source's: a server started there made
 * its own, and documents the source sealed would not be trusted by the nodes.
 */
export async function refuseOtherDevCa(target: Kysely<Database>, material: DevCaMaterial): Promise<void> {
  const there = await new DevPkiStore(target).load();
  if (there && !sameDevCa(there, material)) {
    throw new OperationFailed(
      'The target already has a development CA of its own (a server was started on it): documents the source sealed would not be trusted there. Migrate into an empty schema.',
    );
  }
}

/**
 * Carries the source's development CA into the target's database, where the PostgreSQL nodes look for
 * it, so that what the source sealed stays trusted and the nodes seal with the same key.
 */
export async function carryDevCa(target: Kysely<Database>, material: DevCaMaterial): Promise<void> {
  await refuseOtherDevCa(target, material);
  await new DevPkiStore(target).saveIfAbsent(material);
}

export function sameDevCa(a: DevCaMaterial, b: DevCaMaterial): boolean {
  return (
    a.rootCertificate === b.rootCertificate &&
    a.rootKey === b.rootKey &&
    a.sealCertificate === b.sealCertificate &&
    a.sealKey === b.sealKey
  );
}
