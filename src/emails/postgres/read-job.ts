import type { PgEmailReads, PgEmailReadsRoot } from './reads.js';
import { emailData, pageOf, syncPageOf, type ListQuery, type ReadJob } from '../reading.js';

/*
 * reading.ts's read jobs on PostgreSQL: the same answers, byte for byte, built by the same
 * functions (pageOf, syncPageOf, emailData) from the same row tuples, read asynchronously.
 * A search is one ordered query per page here: the GIN index gives the matching ids and the
 * planner joins or filters them in (received_at, id) order, so the FTS5 walk of search.ts and its
 * term probe have no twin.
 */

/** A search page, and at a cursor whether hits lie beyond it (run in one snapshot: see runPgReadJob). */
async function searchEmails(r: PgEmailReads, q: ListQuery, match: string) {
  const { filter, pos, perPage } = q;
  const { data, meta, probe } = pageOf(await r.searchPage(match, filter, pos, perPage + 1), pos, perPage);
  if (probe && await r.searchAnyBeyond(match, filter, probe.pos)) Object.assign(meta, probe.cursor);
  return { data, meta };
}

/**
 * A list page without search: the first page, or a page at a cursor together with whether rows
 * lie on the cursor's other side, each one statement (so one snapshot). The rows beyond the page's
 * near edge (pageOf's probe) are those strictly beyond the position, and, when the page has rows,
 * the position's own row too (no row lies between the position and the page).
 */
async function plainEmails(r: PgEmailReads, q: ListQuery) {
  const { filter, pos, perPage } = q;
  if (pos === null) return pageOf(await r.firstPage(filter, perPage + 1), null, perPage);
  const page = await r.cursorPage(filter, pos, perPage + 1);
  const { data, meta, probe } = pageOf(page.rows, pos, perPage);
  if (probe && (page.beyond || (page.rows.length > 0 && page.atPosition))) Object.assign(meta, probe.cursor);
  return { data, meta };
}

/**
 * Runs a read and answers with the JSON text of the whole success body, as runReadJob does (null
 * for an email that is not there). A read of one statement runs on the pool; the others in one
 * read-only snapshot.
 */
export async function runPgReadJob(r: PgEmailReadsRoot, job: ReadJob): Promise<string | null> {
  switch (job.op) {
    case 'list': {
      // A plain list is one statement. A first search page asks nothing beyond itself (its
      // statements each answer exactly alone); a search page at a cursor asks whether hits lie on
      // its other side, in the same snapshot.
      const { query } = job;
      const { match } = query;
      const { data, meta } = match === null ? await plainEmails(r, query)
        : query.pos === null ? await searchEmails(r, query, match) : await r.snapshot((s) => searchEmails(s, query, match));
      return JSON.stringify({ status: 'success', data, meta });
    }
    case 'sync': {
      const q = job.query;
      const { data, meta } = syncPageOf(await r.syncPage(q.tenantId, q.from, q.perPage + 1, q.mailboxId), q.perPage);
      return JSON.stringify({ status: 'success', data, meta });
    }
    case 'get': {
      const email = await r.snapshot(async (s) => {
        const e = await s.get(job.tenantId, job.id);
        return e ? emailData(e, await s.attachmentsOf(job.id)) : null;
      });
      return email === null ? null : JSON.stringify({ status: 'success', data: email });
    }
  }
}
