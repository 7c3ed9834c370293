import type { Db } from '../../db/connection.js';

/**
 * What the folder queries do differently on each database. Everything else is one query for both
 * (with db/dml.ts for the small SQL differences); the full-text index is a table of its own kind on
 * each (an FTS5 table on SQLite, a tsvector column on PostgreSQL), so its match is this port.
 */
export interface FolderSearchPort {
  /** Ids among `ids` whose indexed subject, body or sender match a full-text expression (emails/fts.ts). */
  ftsMatching(db: Db, match: string, ids: number[]): Promise<Set<number>>;
}
