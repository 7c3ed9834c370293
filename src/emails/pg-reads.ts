import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/connection.js';
import { decodePgSearch, tsquery } from './pg-search.js';
import { LIST_COLUMNS, type AttachmentRow, type EmailRow, type ListFilter, type ListRow, type Position, type SyncRow } from './store.js';

/*
 * The hot reads of store.ts (`createEmailReads`) on PostgreSQL (DECISIONS.md section 17): the same
 * rows as the same tuples, so reading.ts shapes the answers, but asynchronous, over the pool, with
 * every value a bound parameter. The queries are index ranges over emails_tenant_received /
 * emails_mailbox_received (keyset by (received_at, id)), emails_tenant_seq for sync, and the GIN
 * index of emails_fts for `q` (see docs/ARCHITECTURE.md "PostgreSQL").
 */

const LIST = sql.raw(LIST_COLUMNS.map((c) => `e.${c.slice(2)}`).join(', '));

/** A row as a tuple in column order (the JSON building reads tuples, as better-sqlite3's raw mode gives them). */
const tuple = <T>(row: Record<string, unknown>): T => Object.values(row) as T;

/** The WHERE of a list page: tenant, live rows, the filters, and the side of the cursor position. */
function listWhere(f: ListFilter, pos: Position | null): RawBuilder<unknown> {
  const w: RawBuilder<unknown>[] = [sql`e.tenant_id = ${f.tenantId}::bigint`, sql`e.deleted_at IS NULL`];
  if (f.mailboxId !== undefined) w.push(sql`e.mailbox_id = ${f.mailboxId}::bigint`);
  if (f.folder !== undefined) w.push(sql`e.folder = ${f.folder}`);
  if (f.unread === true) w.push(sql`e.read_at IS NULL`);
  if (f.unread === false) w.push(sql`e.read_at IS NOT NULL`);
  if (f.since !== undefined) w.push(sql`e.received_at >= ${f.since}::bigint`);
  if (f.before !== undefined) w.push(sql`e.received_at <= ${f.before}::bigint`);
  // A plain range on received_at (an index range) plus the tie-break on id.
  if (pos) {
    const at = pos.receivedAt;
    w.push(pos.side === 'below'
      ? sql`e.received_at <= ${at}::bigint AND (e.received_at < ${at}::bigint OR e.id < ${pos.id}::bigint)`
      : sql`e.received_at >= ${at}::bigint AND (e.received_at > ${at}::bigint OR e.id > ${pos.id}::bigint)`);
  }
  return sql.join(w, sql` AND `);
}

const ORDER = {
  below: sql`ORDER BY e.received_at DESC, e.id DESC`,
  above: sql`ORDER BY e.received_at ASC, e.id ASC`,
};

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
async function searchRows(db: Db, plan: SearchPlanLimits, match: string, f: ListFilter, pos: Position | null, limit: number): Promise<ListRow[]> {
  const q = tsquery(decodePgSearch(match));
  const where = listWhere(f, pos);
  const side = pos?.side ?? 'below';
  const order = ORDER[side];
  // One statement for the common case: up to FEW_HITS hits of the whole index, counted, and when
  // fewer (they are all of them) the page read from those. The LATERAL page runs only then; its
  // row of NULLs (no hit in range) or the count alone (too many hits) tells the two apart.
  const rare = await sql<Record<string, unknown>>`WITH hits AS MATERIALIZED (SELECT f.email_id FROM emails_fts f WHERE f.document @@ ${q} LIMIT ${plan.fewHits}),
      n AS (SELECT count(*)::int AS hit_count FROM hits)
    SELECT p.*, n.hit_count FROM n LEFT JOIN LATERAL (
      SELECT ${LIST} FROM emails e WHERE n.hit_count < ${plan.fewHits} AND ${where} AND e.id IN (SELECT email_id FROM hits) ${order} LIMIT ${limit}
    ) p ON true ${OUTER_ORDER[side]}`.execute(db);
  if (Number(rare.rows[0].hit_count) < plan.fewHits) return rare.rows.filter((r) => r.id !== null).map(withoutCount);
  const everyHit = async () => (await sql<Record<string, unknown>>`WITH hits AS MATERIALIZED (SELECT f.email_id FROM emails_fts f WHERE f.document @@ ${q})
    SELECT ${LIST} FROM emails e WHERE ${where} AND e.id IN (SELECT email_id FROM hits) ${order} LIMIT ${limit}`.execute(db)).rows.map(tuple<ListRow>);
  const window = plan.window;
  // The match is a scalar subquery, not EXISTS, so that it stays a check per row in index order
  // (which stops at `limit` hits) rather than a join of every hit, which the planner prefers.
  const walked = await sql<Record<string, unknown>>`SELECT ${LIST} FROM (SELECT ${LIST} FROM emails e WHERE ${where} ${order} LIMIT ${window}) e
    WHERE (SELECT f.document @@ ${q} FROM emails_fts f WHERE f.email_id = e.id) ${order} LIMIT ${limit}`.execute(db);
  if (walked.rows.length >= limit) return walked.rows.map(tuple<ListRow>);
  const inRange = await sql<{ n: number }>`SELECT count(*) AS n FROM (SELECT 1 FROM emails e WHERE ${where} ${order} LIMIT ${window}) x`.execute(db);
  if (Number(inRange.rows[0].n) < window) return walked.rows.map(tuple<ListRow>);
  return everyHit();
}

/** The order of a LATERAL page's rows kept in the statement around it. */
const OUTER_ORDER = {
  below: sql`ORDER BY p.received_at DESC, p.id DESC`,
  above: sql`ORDER BY p.received_at ASC, p.id ASC`,
};

/** A list row of the combined search statement, without its trailing hit count. */
function withoutCount(row: Record<string, unknown>): ListRow {
  const values = Object.values(row);
  values.pop();
  return values as unknown as ListRow;
}

/** The hot reads over `db` (the pool, or the read transaction of `snapshot`). */
function readsOn(db: Db, plan: SearchPlanLimits) {
  return {
    async listPage(f: ListFilter, pos: Position | null, limit: number): Promise<ListRow[]> {
      const r = await sql<Record<string, unknown>>`SELECT ${LIST} FROM emails e WHERE ${listWhere(f, pos)} ${ORDER[pos?.side ?? 'below']} LIMIT ${limit}`.execute(db);
      return r.rows.map(tuple<ListRow>);
    },
    async anyBeyond(f: ListFilter, pos: Position): Promise<boolean> {
      // Ordered from the position outwards: unordered, the planner takes a sequential scan from the
      // oldest rows, which reads the whole table before it finds a row newer than a deep position.
      const r = await sql`SELECT 1 FROM emails e WHERE ${listWhere(f, pos)} ${ORDER[pos.side]} LIMIT 1`.execute(db);
      return r.rows.length > 0;
    },
    /** One page of search hits nearest to `pos` (or the newest), as list rows. */
    searchPage: (match: string, f: ListFilter, pos: Position | null, limit: number) => searchRows(db, plan, match, f, pos, limit),
    searchAnyBeyond: async (match: string, f: ListFilter, pos: Position) => (await searchRows(db, plan, match, f, pos, 1)).length > 0,
    async get(tenantId: number, id: number): Promise<EmailRow | undefined> {
      const r = await sql<Record<string, unknown>>`SELECT ${LIST}, e.message_id, e.updated_seq, c.cc, c.bcc, c.headers, c.auth, c.body_text, c.body_html, c.inbound_id, e.flags
        FROM emails e JOIN email_contents c ON c.email_id = e.id WHERE e.id = ${id}::bigint AND e.tenant_id = ${tenantId}::bigint AND e.deleted_at IS NULL`.execute(db);
      return r.rows.length ? tuple<EmailRow>(r.rows[0]) : undefined;
    },
    async attachmentsOf(emailId: number): Promise<AttachmentRow[]> {
      const r = await sql<AttachmentRow>`SELECT id, filename, content_type, size, content_id, disposition, sha256 FROM attachments WHERE email_id = ${emailId}::bigint ORDER BY id`.execute(db);
      return r.rows;
    },
    async syncPage(tenantId: number, from: { atLeast: number } | { above: number }, limit: number, mailboxId?: number): Promise<SyncRow[]> {
      const marker = 'above' in from ? sql`e.updated_seq > ${from.above}::bigint` : sql`e.updated_seq >= ${from.atLeast}::bigint`;
      const box = mailboxId === undefined ? sql`` : sql`AND e.mailbox_id = ${mailboxId}::bigint`;
      const r = await sql<Record<string, unknown>>`SELECT ${LIST}, e.deleted_at, e.updated_seq FROM emails e
        WHERE e.tenant_id = ${tenantId}::bigint AND ${marker} ${box} ORDER BY e.updated_seq LIMIT ${limit}`.execute(db);
      return r.rows.map(tuple<SyncRow>);
    },
  };
}
export type PgEmailReads = ReturnType<typeof readsOn>;

/** The hot reads on PostgreSQL; `plan` is SEARCH_WINDOW and FEW_HITS unless a test needs every search plan on little mail. */
export function createPgEmailReads(root: Db, plan: SearchPlanLimits = { window: SEARCH_WINDOW, fewHits: FEW_HITS }) {
  return {
    ...readsOn(root, plan),
    /**
     * Runs `fn` in one read-only REPEATABLE READ transaction: every statement of a request sees
     * the same snapshot, as a SQLite read transaction gives (a page and the question whether rows
     * lie beyond it must agree).
     */
    snapshot: <T>(fn: (reads: PgEmailReads) => Promise<T>): Promise<T> =>
      root.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute((trx) => fn(readsOn(trx, plan))),
  };
}
export type PgEmailReadsRoot = ReturnType<typeof createPgEmailReads>;
