import type { Kysely } from 'kysely';
import type { Database } from './db/schema.js';

/** PEM text of a dev CA, as the `dev_pki` row holds it. */
export interface DevPkiPems {
  rootCertificate: string;
  rootKey: string;
  sealCertificate: string;
  sealKey: string;
}

const NAME = 'default';

/**
 * The installation's development PKI in the database (pki/dev-ca.ts `DevCaStore`): one row, written
 * once; a second writer's row is dropped by the primary key, so concurrent first starts agree.
 *
 * ```ts
 * const ca = await openSharedDevCa({ store: new DevPkiStore(db) });
 * ```
 */
export class DevPkiStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async load(): Promise<DevPkiPems | undefined> {
    const row = await this.#db.selectFrom('dev_pki').selectAll().where('name', '=', NAME).executeTakeFirst();
    return (
      row && {
        rootCertificate: row.root_certificate,
        rootKey: row.root_key,
        sealCertificate: row.seal_certificate,
        sealKey: row.seal_key,
      }
    );
  }

  async saveIfAbsent(pems: DevPkiPems): Promise<void> {
    await this.#db
      .insertInto('dev_pki')
      .values({
        name: NAME,
        root_certificate: pems.rootCertificate,
        root_key: pems.rootKey,
        seal_certificate: pems.sealCertificate,
        seal_key: pems.sealKey,
        created_at: new Date().toISOString(),
      })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
  }

  async replaceSealCertificate(previous: string, next: string): Promise<void> {
    await this.#db
      .updateTable('dev_pki')
      .set({ seal_certificate: next })
      .where('name', '=', NAME)
      .where('seal_certificate', '=', previous)
      .execute();
  }
}
