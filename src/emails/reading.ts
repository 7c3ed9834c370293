import { encodeListCursor, encodeSyncCursor } from './cursor.js';
import { markerTime } from '../mailstore/markers.js';
import { newestHitsSync, plainPrefix } from './search.js';
import { withSpamStatus } from '../spam/header.js';
import type { SpamVerdict } from '../inbound/spam-verdict.js';
import { G, L, S, type AttachmentRow, type EmailReads, type EmailRow, type ListFilter, type ListRow, type Position, type SyncRow } from './store.js';

/*
 * The reading side of the emails API as synchronous functions of the read queries (store.ts
 * `createEmailReads`): list pages, sync pages and single emails, shaped as DECISIONS.md section 8
 * says. Requests arrive validated and decoded (cursors, search text), so nothing here refuses a
 * request. The same functions run on the main thread and in the reader threads (read-worker.ts),
 * which answer with the JSON text of the response body.
 */

const P2 = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const P3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const DAY_MS = 86_400_000;
// `YYYY-MM-DDT` of recently formatted days, direct-mapped by day number.
const DAY_SLOTS = 64;
const cachedDays = new Float64Array(DAY_SLOTS).fill(NaN);
const cachedPrefixes: string[] = new Array<string>(DAY_SLOTS).fill('');

/**
 * `new Date(ms).toISOString()`, about five times faster: the `YYYY-MM-DDT` of recently seen days is
 * kept and the time of day is written from tables. Anything unusual (years outside 0-9999, so a
 * longer form; fractions; NaN, which throws as before) goes through Date.
 */
export function iso(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  const slot = day & (DAY_SLOTS - 1);
  if (cachedDays[slot] !== day || !Number.isInteger(ms)) {
    const full = new Date(ms).toISOString();
    if (full.length === 24 && Number.isInteger(ms)) {
      cachedDays[slot] = day;
      cachedPrefixes[slot] = full.slice(0, 11);
    }
    return full;
  }
  let t = ms - day * DAY_MS;
  const h = Math.floor(t / 3_600_000);
  t -= h * 3_600_000;
  const m = Math.floor(t / 60_000);
  t -= m * 60_000;
  const sec = Math.floor(t / 1000);
  return `${cachedPrefixes[slot]}${P2[h]}:${P2[m]}:${P2[sec]}.${P3[t - sec * 1000]}Z`;
}

/** A stored row as a list item of DECISIONS.md section 8. */
export function listItem(r: ListRow | EmailRow | SyncRow) {
  return {
    id: r[L.id],
    mailbox_id: r[L.mailbox_id],
    to_email: r[L.to_email],
    from_email: r[L.from_email],
    from_name: r[L.from_name],
    subject: r[L.subject],
    snippet: r[L.snippet],
    received_at: iso(r[L.received_at]),
    is_read: r[L.read_at] !== null,
    has_attachments: r[L.has_attachments] === 1,
    size: r[L.size],
    folder: r[L.folder],
  };
}

/** The flags get shows: the stored ones but \Deleted (\Seen is is_read and never stored). */
export const visibleFlags = (stored: string): string[] => (stored === '' ? [] : stored.split(' ').filter((f) => f !== '\\Deleted'));

/** A change as a sync item: a tombstone for deleted mail, else the list item with updated_at (last). */
export function syncItem(r: SyncRow) {
  const deletedAt = r[S.deleted_at];
  const updatedAt = iso(markerTime(r[S.updated_seq]));
  if (deletedAt !== null) return { id: r[L.id], mailbox_id: r[L.mailbox_id], deleted: true, deleted_at: iso(deletedAt), updated_at: updatedAt };
  // Added in place rather than spread into a new object: one object per row.
  const item: ReturnType<typeof listItem> & { updated_at?: string } = listItem(r);
  item.updated_at = updatedAt;
  return item;
}

/** Pagination metadata of a page. */
export interface PageMeta {
  next_cursor: string | null;
  prev_cursor: string | null;
  per_page: number;
}

/** A list request, validated and decoded: `match` is the FTS5 expression of `q` (fts.ts), `pos` the cursor's position. */
export interface ListQuery {
  filter: ListFilter;
  match: string | null;
  pos: Position | null;
  perPage: number;
}

/** A sync request, validated and decoded. */
export interface SyncQuery {
  tenantId: number;
  from: { atLeast: number } | { above: number };
  perPage: number;
  mailboxId?: number;
}

/** A (received_at, id) key of a row. */
interface Key { received_at: number; id: number }
const keyOf = (r: ListRow): Key => ({ received_at: r[L.received_at], id: r[L.id] });
const at = (k: Key, side: 'below' | 'above'): Position => ({ receivedAt: k.received_at, id: k.id, side });
const next = (k: Key) => encodeListCursor({ direction: 'next', receivedAt: k.received_at, id: k.id });
const prev = (k: Key) => encodeListCursor({ direction: 'prev', receivedAt: k.received_at, id: k.id });

/** The rows of a page (plus one): straight from the index without `match`; ids first, then rows, with it. */
function pageRows(r: EmailReads, { filter, match, pos, perPage }: ListQuery): ListRow[] {
  if (match === null) return r.listPage(filter, pos, perPage + 1);
  // Keys of the page on one side of the position (or the first page), nearest first, plus one to tell if more follow.
  const keys = pos?.side === 'above'
    ? r.searchOrdered(match, filter, pos, perPage + 1)
    : newestHitsSync(perPage + 1, (belowId, limit) => r.searchChunk(match, filter, pos, belowId, limit));
  const rows = new Map(r.listRows(filter.tenantId, keys.map((k) => k.id)).map((x) => [x[L.id], x]));
  return keys.flatMap((k) => { const x = rows.get(k.id); return x ? [x] : []; });
}

const anyBeyond = (r: EmailReads, { filter, match }: ListQuery, pos: Position) =>
  (match === null ? r.anyBeyond(filter, pos) : r.searchAnyBeyond(match, filter, pos));

/**
 * The query with the same meaning and a cheaper search expression when there is one: a prefix on
 * the last word that only one term of the index has (the word itself) asks for that term exactly
 * (search.ts `plainPrefix`). The index is checked in the same read transaction as the search runs.
 */
function cheaperMatch(r: EmailReads, q: ListQuery): ListQuery {
  const prefix = q.match === null ? null : plainPrefix(q.match);
  if (!prefix || r.hasLongerTerm(prefix.token)) return q;
  return { ...q, match: prefix.exact };
}

/**
 * A page made of the rows read for it (up to perPage + 1, nearest to the position first): its
 * items and cursors, and the one question left, whether rows lie beyond its near edge (`probe`;
 * when they do, `probe.cursor` is the cursor the meta lacks).
 */
export function pageOf(rows: ListRow[], pos: Position | null, perPage: number) {
  const meta: PageMeta = { next_cursor: null, prev_cursor: null, per_page: perPage };
  const more = rows.length > perPage;
  const page = rows.slice(0, perPage);
  if (pos?.side === 'above') page.reverse();
  const data = page.map(listItem);
  const first = page.length ? keyOf(page[0]) : undefined;
  const last = page.length ? keyOf(page[page.length - 1]) : undefined;
  let probe: { pos: Position; cursor: { prev_cursor: string } | { next_cursor: string } } | null = null;
  if (!pos) {
    if (more) meta.next_cursor = next(last!);
  } else if (pos.side === 'below') {
    if (more) meta.next_cursor = next(last!);
    const edge = first ?? { received_at: pos.receivedAt, id: pos.id };
    probe = { pos: at(edge, 'above'), cursor: { prev_cursor: prev(edge) } };
  } else {
    if (more) meta.prev_cursor = prev(first!);
    const edge = last ?? { received_at: pos.receivedAt, id: pos.id };
    probe = { pos: at(edge, 'below'), cursor: { next_cursor: next(edge) } };
  }
  return { data, meta, probe };
}

/**
 * One page of the tenant's mail, newest first, by keyset over (received_at, id): a cursor is a
 * position, so rows arriving between pages never shift what comes next. The page's ids are found
 * first (index or FTS walk) and only then are its rows read.
 */
export function listEmails(r: EmailReads, query: ListQuery) {
  const q = cheaperMatch(r, query);
  const { data, meta, probe } = pageOf(pageRows(r, q), q.pos, q.perPage);
  if (probe && anyBeyond(r, q, probe.pos)) Object.assign(meta, probe.cursor);
  return { data, meta };
}

/**
 * Changes with an update marker at or after `since` (or after the cursor), oldest change first:
 * live mail as list items with updated_at, deleted mail as tombstones. Markers are unique, so the
 * cursor is just the last marker served.
 */
export function syncEmails(r: EmailReads, q: SyncQuery) {
  return syncPageOf(r.syncPage(q.tenantId, q.from, q.perPage + 1, q.mailboxId), q.perPage);
}

/** A sync page made of the rows read for it (up to perPage + 1, oldest change first). */
export function syncPageOf(rows: SyncRow[], perPage: number) {
  const more = rows.length > perPage;
  const page = rows.slice(0, perPage);
  const data = page.map(syncItem);
  const last = page[page.length - 1];
  const meta: PageMeta = { next_cursor: more ? encodeSyncCursor({ marker: last[S.updated_seq] }) : null, prev_cursor: null, per_page: perPage };
  return { data, meta };
}

/** A live email of the tenant with everything DECISIONS.md section 8 lists, or null. */
export function getEmail(r: EmailReads, tenantId: number, id: number) {
  const e = r.get(tenantId, id);
  return e ? emailData(e, r.attachmentsOf(id)) : null;
}

/** A stored email with its attachments as Get's `data`. */
export function emailData(e: EmailRow, attachments: AttachmentRow[]) {
  const authText = e[G.auth];
  const auth = authText ? JSON.parse(authText) as Record<string, unknown> : {};
  const readAt = e[L.read_at];
  const spamText = e[G.spam];
  const spam = spamText ? JSON.parse(spamText) as SpamVerdict : null;
  return {
    ...listItem(e),
    message_id: e[G.message_id],
    cc: JSON.parse(e[G.cc]) as string[],
    bcc: JSON.parse(e[G.bcc]) as string[],
    body_text: e[G.body_text],
    body_html: e[G.body_html],
    headers: spam ? withSpamStatus(JSON.parse(e[G.headers]) as Record<string, string | string[]>, spam) : JSON.parse(e[G.headers]) as Record<string, string | string[]>,
    auth: { spf: auth.spf ?? null, dkim: auth.dkim ?? null, dmarc: auth.dmarc ?? null },
    read_at: readAt === null ? null : iso(readAt),
    updated_at: iso(markerTime(e[G.updated_seq])),
    flags: visibleFlags(e[G.flags]),
    spam,
    attachments: attachments.map((a) => ({
      id: a.id, filename: a.filename, content_type: a.content_type, size: a.size, content_id: a.content_id, disposition: a.disposition,
    })),
  };
}

/** A read the reader threads can run: what the main thread sends them. */
export type ReadJob =
  | { op: 'list'; query: ListQuery }
  | { op: 'sync'; query: SyncQuery }
  | { op: 'get'; tenantId: number; id: number };

/**
 * Runs a read in one read transaction and answers with the JSON text of the whole success body,
 * exactly as Koa would serialise `{ status: 'success', data, meta }` (or `{ status, data }` for one
 * email); null for an email that is not there.
 */
export function runReadJob(r: EmailReads, job: ReadJob): string | null {
  return r.snapshot(() => answer(r, job));
}

function answer(r: EmailReads, job: ReadJob): string | null {
  switch (job.op) {
    case 'list': {
      const { data, meta } = listEmails(r, job.query);
      return JSON.stringify({ status: 'success', data, meta });
    }
    case 'sync': {
      const { data, meta } = syncEmails(r, job.query);
      return JSON.stringify({ status: 'success', data, meta });
    }
    case 'get': {
      const email = getEmail(r, job.tenantId, job.id);
      return email === null ? null : JSON.stringify({ status: 'success', data: email });
    }
  }
}
