import { sql } from 'kysely';
import { pgSearchOfFtsMatch, tsquery } from '../../postgres/search.js';
import type { FolderSearchPort } from '../ports.js';

/** SEARCH's full-text match on PostgreSQL: a tsvector per email, weighted by field (emails/postgres/email-writes.ts). */
export const postgresFolderSearch: FolderSearchPort = {
  async ftsMatching(db, match, ids) {
    if (ids.length === 0) return new Set();
    // The document holds all four fields, weighted by field: BODY keeps to the body's (B).
    const { search, bodyOnly } = pgSearchOfFtsMatch(match);
    if (search === null) return new Set();
    const document = bodyOnly ? sql`ts_filter(document, '{b}')` : sql`document`;
    const r = await sql<{ email_id: number }>`SELECT email_id FROM emails_fts WHERE email_id = ANY(${ids}::bigint[]) AND ${document} @@ ${tsquery(search)}`.execute(db);
    return new Set(r.rows.map((x) => Number(x.email_id)));
  },
};
