import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { notFound } from '../errors.js';
import { iso } from '../format.js';
import type { EventRecorder } from '../webhooks/events.js';
import { decodeListCursor, decodeSyncCursor, encodeListCursor, encodeSyncCursor } from './cursor.js';
import { ftsMatch } from './fts.js';
import { markerAt, markerTime, type Markers } from './markers.js';
import { newestHits } from './search.js';
import type { EmailStore, ListFilter, Position } from './store.js';

/** Page size default and bounds (DECISIONS.md section 8). */
export const DEFAULT_PER_PAGE = 25;

/** A list request after validation. */
export interface ListRequest {
  mailboxId?: number;
  unread?: boolean;
  since?: number;
  before?: number;
  q?: string;
  cursor?: string;
  perPage: number;
}

type ListRow = Awaited<ReturnType<EmailStore['listRows']>>[number];

/** A stored row as a list item of DECISIONS.md section 8. */
export function listItem(r: ListRow) {
  return {
    id: r.id,
    mailbox_id: r.mailbox_id,
    to_email: r.to_email,
    from_email: r.from_email,
    from_name: r.from_name,
    subject: r.subject,
    snippet: r.snippet,
    received_at: iso(r.received_at),
    is_read: r.read_at !== null,
    has_attachments: r.has_attachments === 1,
    size: r.size,
  };
}

/** Reading, marking and deleting stored mail, and sync. */
export function createEmailService({ db, store, markers, events, clock }: {
  db: Db; store: EmailStore; markers: Markers; events: EventRecorder; clock: Clock;
}) {
  /** Keys of a search page on one side of a position (or the first page), nearest first, plus one to tell if more follow. */
  function searchKeys(filter: ListFilter, match: string, pos: Position | null, perPage: number) {
    if (pos?.side === 'above') return store.searchOrdered(db, match, filter, pos, perPage + 1);
    return newestHits(perPage + 1, (belowId, limit) => store.searchChunk(db, match, filter, pos, belowId, limit));
  }

  /** The rows of a page (plus one): straight from the index without `q`; ids first, then rows, with it. */
  async function pageRows(filter: ListFilter, match: string | null, pos: Position | null, perPage: number): Promise<ListRow[]> {
    if (match === null) return store.listPage(db, filter, pos, perPage + 1);
    const keys = await searchKeys(filter, match, pos, perPage);
    const rows = new Map((await store.listRows(db, filter.tenantId, keys.map((k) => k.id))).map((x) => [x.id, x]));
    return keys.flatMap((k) => { const x = rows.get(k.id); return x ? [x] : []; });
  }

  function anyBeyond(filter: ListFilter, match: string | null, pos: Position) {
    return match === null ? store.anyBeyond(db, filter, pos) : store.searchAnyBeyond(db, match, filter, pos);
  }

  return {
    /**
     * One page of the tenant's mail, newest first, by keyset over (received_at, id): a cursor is
     * a position, so rows arriving between pages never shift what comes next. The page's ids are
     * found first (index or FTS walk) and only then are its rows read.
     */
    async list(tenantId: number, r: ListRequest) {
      const filter: ListFilter = { tenantId, mailboxId: r.mailboxId, unread: r.unread, since: r.since, before: r.before };
      const cursor = r.cursor ? decodeListCursor(r.cursor) : null;
      const match = r.q !== undefined && r.q.trim() !== '' ? ftsMatch(r.q) : null;
      const meta = { next_cursor: null as string | null, prev_cursor: null as string | null, per_page: r.perPage };
      // Text with nothing searchable in it matches nothing.
      if (r.q !== undefined && r.q.trim() !== '' && match === null) return { data: [], meta };
      const pos: Position | null = cursor ? { receivedAt: cursor.receivedAt, id: cursor.id, side: cursor.direction === 'next' ? 'below' : 'above' } : null;
      const rows = await pageRows(filter, match, pos, r.perPage);
      const more = rows.length > r.perPage;
      const page = rows.slice(0, r.perPage);
      if (pos?.side === 'above') page.reverse();
      const data = page.map(listItem);
      const first = page[0];
      const last = page[page.length - 1];
      const at = (k: { received_at: number; id: number }, side: 'below' | 'above'): Position => ({ receivedAt: k.received_at, id: k.id, side });
      const next = (k: { received_at: number; id: number }) => encodeListCursor({ direction: 'next', receivedAt: k.received_at, id: k.id });
      const prev = (k: { received_at: number; id: number }) => encodeListCursor({ direction: 'prev', receivedAt: k.received_at, id: k.id });
      if (!pos) {
        if (more) meta.next_cursor = next(last);
      } else if (pos.side === 'below') {
        if (more) meta.next_cursor = next(last);
        const edge = first ?? { received_at: pos.receivedAt, id: pos.id };
        if (await anyBeyond(filter, match, at(edge, 'above'))) meta.prev_cursor = prev(edge);
      } else {
        if (more) meta.prev_cursor = prev(first);
        const edge = last ?? { received_at: pos.receivedAt, id: pos.id };
        if (await anyBeyond(filter, match, at(edge, 'below'))) meta.next_cursor = next(edge);
      }
      return { data, meta };
    },

    /** A live email of the tenant with everything DECISIONS.md section 8 lists; 404 otherwise. */
    async get(tenantId: number, id: number) {
      const e = await store.get(db, tenantId, id);
      if (!e) throw notFound('Email not found');
      const attachments = await store.attachmentsOf(db, id);
      const auth = e.auth ? JSON.parse(e.auth) as Record<string, unknown> : {};
      return {
        ...listItem(e),
        message_id: e.message_id,
        cc: JSON.parse(e.cc) as string[],
        bcc: JSON.parse(e.bcc) as string[],
        body_text: e.body_text,
        body_html: e.body_html,
        headers: JSON.parse(e.headers) as Record<string, string | string[]>,
        auth: { spf: auth.spf ?? null, dkim: auth.dkim ?? null, dmarc: auth.dmarc ?? null },
        read_at: e.read_at === null ? null : iso(e.read_at),
        updated_at: iso(markerTime(e.updated_seq)),
        attachments: attachments.map((a) => ({
          id: a.id, filename: a.filename, content_type: a.content_type, size: a.size, content_id: a.content_id, disposition: a.disposition,
        })),
      };
    },

    /** Sets read_at once and records `email.read` in the same transaction; repeating it changes nothing. */
    async markRead(tenantId: number, id: number): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const e = await store.state(trx, tenantId, id);
        if (!e) throw notFound('Email not found');
        if (e.read_at !== null) return;
        if (await store.markRead(trx, id, clock.now(), markers.next())) {
          await events.record(trx, [{ tenantId, type: 'email.read', emailId: id, mailboxId: e.mailbox_id }]);
        }
      });
    },

    /** Soft-deletes (a tombstone for sync), frees its quota and records `email.deleted` in the same transaction. */
    async remove(tenantId: number, id: number): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const e = await store.state(trx, tenantId, id);
        if (!e || !(await store.softDelete(trx, id, clock.now(), markers.next()))) throw notFound('Email not found');
        // Soft-deleted mail is out of the user's reach, so it no longer counts against the quota.
        await store.releaseBytes(trx, e.mailbox_id, e.size);
        await events.record(trx, [{ tenantId, type: 'email.deleted', emailId: id, mailboxId: e.mailbox_id }]);
      });
    },

    /**
     * Changes with an update marker at or after `since` (or after the cursor), oldest change first:
     * live mail as list items with updated_at, deleted mail as tombstones. Markers are unique, so
     * the cursor is just the last marker served.
     */
    async sync(tenantId: number, r: { since: number; cursor?: string; perPage: number; mailboxId?: number }) {
      const from = r.cursor ? { above: decodeSyncCursor(r.cursor).marker } : { atLeast: markerAt(r.since) };
      const rows = await store.syncPage(db, tenantId, from, r.perPage + 1, r.mailboxId);
      const more = rows.length > r.perPage;
      const page = rows.slice(0, r.perPage);
      const data = page.map((x) => (x.deleted_at !== null
        ? { id: x.id, mailbox_id: x.mailbox_id, deleted: true, deleted_at: iso(x.deleted_at), updated_at: iso(markerTime(x.updated_seq)) }
        : { ...listItem(x), updated_at: iso(markerTime(x.updated_seq)) }));
      const last = page[page.length - 1];
      return { data, meta: { next_cursor: more ? encodeSyncCursor({ marker: last.updated_seq }) : null, prev_cursor: null, per_page: r.perPage } };
    },
  };
}
export type EmailService = ReturnType<typeof createEmailService>;
