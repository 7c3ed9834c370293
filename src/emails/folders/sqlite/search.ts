import { sql } from 'kysely';
import { jsonList } from '../../../db/json-list.js';
import type { FolderSearchPort } from '../ports.js';

/** SEARCH's full-text match on SQLite: the FTS5 table emails_fts, keyed by the email's rowid. */
export const sqliteFolderSearch: FolderSearchPort = {
  async ftsMatching(db, match, ids) {
    if (ids.length === 0) return new Set();
    const r = await sql<{ rowid: number }>`SELECT rowid FROM emails_fts WHERE emails_fts MATCH ${match} AND rowid IN ${jsonList(ids)}`.execute(db);
    return new Set(r.rows.map((x) => x.rowid));
  },
};
