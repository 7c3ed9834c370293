import type { PgEmailReads, PgEmailReadsRoot } from './pg-reads.js';
import { emailData, pageOf, syncPageOf, type ListQuery, type ReadJob } from './reading.js';

/*
 * reading.ts's read jobs on PostgreSQL: the same answers, byte for byte, built by the same
 * functions (pageOf, syncPageOf, emailData) from the same row tuples, read asynchronously.
 * A search is one ordered query per page here: the GIN index gives the matching ids and the
 * planner joins or filters them in (received_at, id) order, so the FTS5 walk of search.ts and its
 * term probe have no twin.
 */

async function listEmails(r: PgEmailReads, q: ListQuery) {
  const { filter, match, pos, perPage } = q;
  const rows = match === null ? await r.listPage(filter, pos, perPage + 1) : await r.searchPage(match, filter, pos, perPage + 1);
  const { data, meta, probe } = pageOf(rows, pos, perPage);
  if (probe) {
    const beyond = match === null ? await r.anyBeyond(filter, probe.pos) : await r.searchAnyBeyond(match, filter, probe.pos);
    if (beyond) Object.assign(meta, probe.cursor);
  }
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
      // A first page asks nothing beyond itself: it needs no snapshot (a search's statements each
      // answer exactly alone). A page at a cursor asks whether rows lie on its other side, in the same snapshot.
      const one = job.query.pos === null;
      const { data, meta } = one ? await listEmails(r, job.query) : await r.snapshot((s) => listEmails(s, job.query));
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
