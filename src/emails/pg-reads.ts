import type pg from 'pg';
import type { Db } from '../db/connection.js';
import { pgPoolOf } from '../db/postgres.js';
import { decodePgSearch } from './pg-search.js';
import { filterWhere, keyOf, LIST, limitOf, ORDER, OUTER_ORDER, Params, run, sideOf, tsqueryOf, type Queryable } from './pg-sql.js';
import type { AttachmentRow, EmailRow, ListFilter, ListRow, Position, SyncRow } from './store.js';

/*
 * The hot reads of store.ts (`createEmailReads`) on PostgreSQL (DECISIONS.md section 17): the same
 * rows as the same tuples, so reading.ts shapes the answers, but asynchronous, with every value a
 * bound parameter, straight through the driver (pg-sql.ts). The queries are index ranges over
 * emails_tenant_received / emails_mailbox_received (keyset by (received_at, id)), emails_tenant_seq
 * for sync, and the GIN index of emails_fts for `q` (see docs/ARCHITECTURE.md "PostgreSQL").
 */

/**
 * Rows of the listed range a search walks first, newest end first (see `searchRows`). A word in
 * one mail of 40 fills a page of 25 within it.
 */
const SEARCH_WINDOW = 1000;

/**
 * Hits in the whole index (every tenant) up to which a search reads them all and then the page
 * among them (the GIN index, and a recheck of each hit's document).
 */
const FEW_HITS = 1000;

/** How a search chooses its plan (tests set both low to run every plan on little mail). */
export interface SearchPlanLimits {
  window: number;
  fewHits: number;
}

/** A page at a cursor with what is needed to tell whether rows lie on the position's other side. */
export interface CursorPage {
  rows: ListRow[];
  /** A live row strictly beyond the position, on the side away from the page. */
  beyond: boolean;
  /** The position's own row is live and listed (it lies beyond the page's near edge when the page has rows). */
  atPosition: boolean;
}

const other = { below: 'above', above: 'below' } as const;

/** A LATERAL page's rows without the NULL row a LEFT JOIN gives when the page is empty. */
const pageRows = (rows: unknown[][], width: number): ListRow[] =>
  rows.filter((r) => r[0] !== null).map((r) => (r.length === width ? r : r.slice(0, width)) as unknown as ListRow);
const LIST_WIDTH = LIST.split(',').length;

/**
 * The rows of a search, nearest to the position first, in two plans, since PostgreSQL's estimate
 * of an AND of words multiplies their frequencies and so misjudges which plan is cheap (words that
 * never occur together made it walk a whole tenant): first the newest SEARCH_WINDOW rows of the
 * range in index order, each checked against its document (common words: done after a few dozen
 * rows); when that does not fill the page and the range holds more rows, every hit from the GIN
 * index, materialised, then joined to the range (rare words and combinations). A search with
 * fewer than FEW_HITS hits in the whole index goes to the second plan at once: the first would
 * read up to SEARCH_WINDOW documents to find few of them. Either plan alone answers exactly.
 */
async function searchRows(on: Queryable, plan: SearchPlanLimits, match: string, f: ListFilter, pos: Position | null, limit: number): Promise<ListRow[]> {
  const search = decodePgSearch(match);
  const side = pos?.side ?? 'below';
  /** A statement's parameters and its WHERE over the range (filters and side of the position). */
  const range = () => {
    const p = new Params();
    const k = pos ? keyOf(pos, p) : null;
    const where = filterWhere(f, p) + (k ? ` AND ${sideOf(side, k)}` : '');
    // The same side for the hits themselves, by their documents' received_at (hitsInOrder).
    const hitsSide = k ? `WHERE ${sideOf(side, k, false, { at: 'received_at', id: 'email_id' })}` : '';
    return { p, where, hitsSide };
  };
  const n = limitOf(limit);
  // One statement for the common case: up to FEW_HITS hits of the whole index, counted, and when
  // fewer (they are all of them) the page read from those. The LATERAL page runs only then; its
  // row of NULLs (no hit in range) or the count alone (too many hits) tells the two apart.
  {
    const { p, where, hitsSide } = range();
    const few = limitOf(plan.fewHits, 0);
    const rows = await run(on, `WITH hits AS MATERIALIZED (SELECT f.email_id, f.received_at FROM emails_fts f WHERE f.document @@ ${tsqueryOf(search, p)} LIMIT ${few}),
        n AS (SELECT count(*)::int AS hit_count FROM hits)
      SELECT p.*, n.hit_count FROM n LEFT JOIN LATERAL (
        SELECT ${LIST} FROM ${hitsInOrder(side, hitsSide)} JOIN emails e ON e.id = h.email_id
        WHERE n.hit_count < ${few} AND ${where} ${HITS_ORDER[side]} LIMIT ${n}
      ) p ON true ${OUTER_ORDER[side]}`, p);
    if (Number(rows[0][LIST_WIDTH]) < plan.fewHits) return pageRows(rows, LIST_WIDTH);
  }
  const window = limitOf(plan.window);
  {
    // The match is a scalar subquery, not EXISTS, so that it stays a check per row in index order
    // (which stops at `limit` hits) rather than a join of every hit, which the planner prefers.
    const { p, where } = range();
    const walked = await run(on, `SELECT ${LIST} FROM (SELECT ${LIST} FROM emails e WHERE ${where} ${ORDER[side]} LIMIT ${window}) e
      WHERE (SELECT f.document @@ ${tsqueryOf(search, p)} FROM emails_fts f WHERE f.email_id = e.id) ${ORDER[side]} LIMIT ${n}`, p);
    if (walked.length >= limit) return walked as unknown as ListRow[];
    const counted = range();
    const inRange = await run(on, `SELECT count(*) FROM (SELECT 1 FROM emails e WHERE ${counted.where} ${ORDER[side]} LIMIT ${window}) x`, counted.p);
    if (Number(inRange[0][0]) < plan.window) return walked as unknown as ListRow[];
  }
  const { p, where, hitsSide } = range();
  return (await run(on, `WITH hits AS MATERIALIZED (SELECT f.email_id, f.received_at FROM emails_fts f WHERE f.document @@ ${tsqueryOf(search, p)})
    SELECT ${LIST} FROM ${hitsInOrder(side, hitsSide)} JOIN emails e ON e.id = h.email_id WHERE ${where} ${HITS_ORDER[side]} LIMIT ${n}`, p)) as unknown as ListRow[];
}

/**
 * The `hits` of a search statement as `h` (those on the position's side: `where`), in the page's
 * order, by the received_at each search document carries (migration 018): the emails rows are then
 * read in that order until the page is full (a nested loop under the LIMIT), one lookup per row
 * of the page rather than one per hit with a sort after. OFFSET 0 keeps the sorted subquery
 * whole: pulled up into the join, the planner joined every hit first.
 */
const hitsInOrder = (side: 'below' | 'above', where: string) =>
  `(SELECT email_id, received_at FROM hits ${where} ${side === 'below' ? 'ORDER BY received_at DESC, email_id DESC' : 'ORDER BY received_at ASC, email_id ASC'} OFFSET 0) h`;

/** The order of `h`'s rows, kept by the statement around the join. */
const HITS_ORDER = {
  below: 'ORDER BY h.received_at DESC, h.email_id DESC',
  above: 'ORDER BY h.received_at ASC, h.email_id ASC',
};

/** The hot reads over `on` (the pool, or the connection of a read transaction of `snapshot`). */
function readsOn(on: Queryable, plan: SearchPlanLimits) {
  return {
    /** The newest rows of the list (the first page), up to `limit`. */
    async firstPage(f: ListFilter, limit: number): Promise<ListRow[]> {
      const p = new Params();
      return (await run(on, `SELECT ${LIST} FROM emails e WHERE ${filterWhere(f, p)} ${ORDER.below} LIMIT ${limitOf(limit)}`, p)) as unknown as ListRow[];
    },
    /**
     * Up to `limit` rows on `pos`'s side, nearest first, and, in the same statement (one snapshot),
     * whether rows lie on its other side: the position's own row, and any strictly beyond it.
     * The page is prepared once per connection and then runs PostgreSQL's generic plan. The probe
     * beyond is a scalar subquery ordered from the position outwards, not EXISTS: PostgreSQL drops
     * an EXISTS' ORDER BY, and the generic plan then took a sequential scan from the oldest rows,
     * reading most of the table before it found a row newer than a deep position (2.9 ms a page).
     */
    async cursorPage(f: ListFilter, pos: Position, limit: number): Promise<CursorPage> {
      const p = new Params();
      const where = filterWhere(f, p);
      const k = keyOf(pos, p);
      const back = other[pos.side];
      const rows = await run(on, `SELECT p.*, b.beyond, b.at FROM (SELECT
          (SELECT true FROM emails e WHERE ${where} AND ${sideOf(back, k)} ${ORDER[back]} LIMIT 1) AS beyond,
          EXISTS (SELECT 1 FROM emails e WHERE ${where} AND e.id = ${k.id}::bigint AND e.received_at = ${k.at}::bigint) AS at
        ) b LEFT JOIN LATERAL (
          SELECT ${LIST} FROM emails e WHERE ${where} AND ${sideOf(pos.side, k)} ${ORDER[pos.side]} LIMIT ${limitOf(limit)}
        ) p ON true ${OUTER_ORDER[pos.side]}`, p);
      return { rows: pageRows(rows, LIST_WIDTH), beyond: rows[0][LIST_WIDTH] === true, atPosition: rows[0][LIST_WIDTH + 1] === true };
    },
    /** One page of search hits nearest to `pos` (or the newest), as list rows. */
    searchPage: (match: string, f: ListFilter, pos: Position | null, limit: number) => searchRows(on, plan, match, f, pos, limit),
    searchAnyBeyond: async (match: string, f: ListFilter, pos: Position) => (await searchRows(on, plan, match, f, pos, 1)).length > 0,
    async get(tenantId: number, id: number): Promise<EmailRow | undefined> {
      const p = new Params();
      const rows = await run(on, `SELECT ${LIST}, e.message_id, e.updated_seq, c.cc, c.bcc, c.headers, c.auth, c.body_text, c.body_html, c.inbound_id, e.flags,
        (SELECT verdict FROM email_spam WHERE email_id = e.id) AS spam
        FROM emails e JOIN email_contents c ON c.email_id = e.id WHERE e.id = ${p.add(id)}::bigint AND e.tenant_id = ${p.add(tenantId)}::bigint AND e.deleted_at IS NULL`, p);
      return rows.length ? rows[0] as unknown as EmailRow : undefined;
    },
    async attachmentsOf(emailId: number): Promise<AttachmentRow[]> {
      const p = new Params();
      const rows = await run(on, `SELECT id, filename, content_type, size, content_id, disposition, sha256 FROM attachments WHERE email_id = ${p.add(emailId)}::bigint ORDER BY id`, p);
      return rows.map(([id, filename, content_type, size, content_id, disposition, sha256]) => ({ id, filename, content_type, size, content_id, disposition, sha256 }) as AttachmentRow);
    },
    async syncPage(tenantId: number, from: { atLeast: number } | { above: number }, limit: number, mailboxId?: number): Promise<SyncRow[]> {
      const p = new Params();
      const marker = 'above' in from ? `e.updated_seq > ${p.add(from.above)}::bigint` : `e.updated_seq >= ${p.add(from.atLeast)}::bigint`;
      const box = mailboxId === undefined ? '' : `AND e.mailbox_id = ${p.add(mailboxId)}::bigint`;
      return (await run(on, `SELECT ${LIST}, e.deleted_at, e.updated_seq FROM emails e
        WHERE e.tenant_id = ${p.add(tenantId)}::bigint AND ${marker} ${box} ORDER BY e.updated_seq LIMIT ${limitOf(limit)}`, p)) as unknown as SyncRow[];
    },
  };
}
export type PgEmailReads = ReturnType<typeof readsOn>;

/** The hot reads on PostgreSQL's `pool`; `plan` is SEARCH_WINDOW and FEW_HITS unless a test needs every search plan on little mail. */
export function createPgPoolReads(pool: pg.Pool, plan: SearchPlanLimits = { window: SEARCH_WINDOW, fewHits: FEW_HITS }) {
  return {
    ...readsOn(pool, plan),
    /**
     * Runs `fn` in one read-only REPEATABLE READ transaction on one connection: every statement of
     * a request sees the same snapshot, as a SQLite read transaction gives (a page and the
     * question whether rows lie beyond it must agree).
     */
    async snapshot<T>(fn: (reads: PgEmailReads) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const out = await fn(readsOn(client, plan));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => { broken = e; });
        throw err;
      } finally {
        client.release(broken); // a connection that could not roll back is closed, not reused
      }
    },
  };
}
export type PgEmailReadsRoot = ReturnType<typeof createPgPoolReads>;

/** The hot reads on the pool under `db`, a handle opened by openPostgresDatabase. */
export const createPgEmailReads = (db: Db, plan?: SearchPlanLimits): PgEmailReadsRoot => createPgPoolReads(pgPoolOf(db).pool, plan);
