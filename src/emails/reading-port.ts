import type { ReadJob } from './reading.js';

/**
 * Where the hot reads run (list, get, sync), which differs between the backends: on SQLite as
 * prepared statements on a read-only connection of their own (db/reader.ts), on PostgreSQL on
 * the pool (postgres/reads.ts); in the built server either runs in reader threads (read-pool.ts).
 */
export interface EmailReading {
  /** A search text as this backend's match expression (fts.ts / postgres/search.ts), or null when nothing in it is searchable. */
  searchMatch(q: string): string | null;
  /** A read job's answer: the JSON text of the response body, or null when there is nothing (get of a missing email). */
  body(job: ReadJob): Promise<string | null>;
}
