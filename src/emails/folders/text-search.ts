import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { dml } from '../../db/backend.js';

/**
 * IMAP SEARCH BODY and TEXT as RFC 9051 6.4.4 defines them: a case-insensitive substring of the
 * body (TEXT: of the header fields too, custom ones included), where the full-text index matches
 * whole words only. Scanned in the database over the stored text of the folder's messages (the
 * decoded text and HTML bodies, and the header fields as stored), so no message bytes reach the process.
 */
export function textQueries(db: Db) {
  return {
    /** The ids among `ids` whose body (with `headers`, header fields too) holds `needle`, any case. */
    async containing(ids: number[], needle: string, headers: boolean): Promise<Set<number>> {
      if (ids.length === 0 || needle === '') return new Set(ids);
      // LIKE (SQLite: ASCII case folded) and ILIKE compare in place, without a lower-cased copy of every body.
      const pattern = `%${needle.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
      const d = dml(db);
      const pos = (column: string) => d.likeAnyCase(sql.ref(column), pattern);
      const where = headers ? sql`(${pos('body_text')} OR ${pos('body_html')} OR ${pos('headers')})` : sql`(${pos('body_text')} OR ${pos('body_html')})`;
      const r = await sql<{ email_id: number }>`SELECT email_id FROM email_contents WHERE email_id IN ${d.list(ids)} AND ${where}`.execute(db);
      return new Set(r.rows.map((x) => Number(x.email_id)));
    },
  };
}
