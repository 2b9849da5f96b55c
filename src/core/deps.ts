import type { Kysely } from 'kysely';
import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import type { SqlDialect } from '../store/db/dialect.js';
import type { Database } from '../store/db/schema.js';
import type { SealKeys } from '../pki/seal-keys.js';
import type { FileStore } from '../store/files/file-store.js';
import type { AnchorSearch } from '../pdf/anchor-search.js';
import type { PagePreviews } from '../pdf/preview/page-previews.js';
import type { Metrics } from './metrics.js';
import type { RevocationFetcher } from '../pki/revocation-fetcher.js';

/** What every use case may be given: passed in, never imported as a module-level singleton. */
export interface Deps {
  db: Kysely<Database>;
  dialect: SqlDialect;
  clock: Clock;
  config: Config;
  files: FileStore;
  /** The organisation seal key, opened on first use. */
  seal: () => Promise<SealKeys>;
  /** Anchor searches, off the event loop and under a time limit. */
  anchors: AnchorSearch;
  /** First-page images of PDFs, drawn off the event loop under limits and kept by content hash. */
  previews: PagePreviews;
  /**
   * What GET /metrics shows: webhook deliveries, time-stamps, signatures (docs/operations.md: Metrics
   * and alerts).
   */
  metrics: Metrics;
  /** OCSP responses and CRLs for PAdES B-LT, fetched (and cached) outside any transaction. */
  revocation: RevocationFetcher;
}
