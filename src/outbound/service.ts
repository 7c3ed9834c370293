import type { Db } from '../db/connection.js';
import { notFound, unprocessable } from '../errors.js';
import { iso } from '../format.js';
import type { OutboundItem } from './schemas.js';
import type { ListPosition, OutboundRow, OutboundStore } from '../mailstore/outbound-store.js';
import type { OutboundStatus } from '../db/tables/outbound.js';

/** Items per page when `per_page` is not given (as GET /v1/emails). */
export const DEFAULT_PER_PAGE = 25;

const CURSOR = /^([np])\.(\d{1,16})$/;

/** The opaque text of a page position. */
const encodeCursor = (p: ListPosition) => Buffer.from(`${p.direction === 'next' ? 'n' : 'p'}.${p.id}`, 'utf8').toString('base64url');

/** Reads a page position; 422 for anything that is not one. */
function decodeCursor(cursor: string): ListPosition {
  const m = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  const id = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(id)) throw unprocessable('cursor is invalid');
  return { direction: m[1] === 'n' ? 'next' : 'prev', id };
}

/** An item in API form. */
export function itemOf(r: OutboundRow): OutboundItem {
  return {
    id: r.id, kind: r.kind, email_id: r.email_id, mail_from: r.mail_from, rcpt_to: r.rcpt_to, status: r.status,
    attempts: r.attempts, next_attempt_at: r.next_attempt_at === null ? null : iso(r.next_attempt_at),
    last_response: r.last_response, created_at: iso(r.created_at), updated_at: iso(r.updated_at),
  };
}

/** The rules of the outbound API (DECISIONS.md section 12): a tenant's items, paged; one item; a retry. */
export function createOutboundService(deps: { db: Db; store: OutboundStore; now: () => number; wake: () => void }) {
  const { db, store } = deps;
  return {
    /** A page of the tenant's items, newest first, with cursors like GET /v1/emails. */
    async list(tenantId: number, q: { status?: OutboundStatus; cursor?: string; perPage: number }) {
      const pos = q.cursor ? decodeCursor(q.cursor) : null;
      const rows = await store.page(db, tenantId, q.status, pos, q.perPage + 1);
      const more = rows.length > q.perPage;
      const page = rows.slice(0, q.perPage);
      if (pos?.direction === 'prev') page.reverse();
      const meta = { next_cursor: null as string | null, prev_cursor: null as string | null, per_page: q.perPage };
      if (page.length > 0) {
        const newest = page[0].id;
        const oldest = page[page.length - 1].id;
        const olderFollow = pos?.direction === 'prev' ? await store.anyBeyond(db, tenantId, q.status, oldest, 'below') : more;
        const newerBefore = pos?.direction === 'prev' ? more : pos !== null && (await store.anyBeyond(db, tenantId, q.status, newest, 'above'));
        if (olderFollow) meta.next_cursor = encodeCursor({ direction: 'next', id: oldest });
        if (newerBefore) meta.prev_cursor = encodeCursor({ direction: 'prev', id: newest });
      }
      return { data: page.map(itemOf), meta };
    },

    /** One item of the tenant; 404 for another tenant's or none. */
    async get(tenantId: number, id: number): Promise<OutboundItem> {
      const r = await store.get(db, tenantId, id);
      if (!r) throw notFound('Outbound item not found');
      return itemOf(r);
    },

    /** Tries a queued or failed item now (a failed one is queued again); 422 for a sent one. */
    async retry(tenantId: number, id: number): Promise<void> {
      const r = await store.get(db, tenantId, id);
      if (!r) throw notFound('Outbound item not found');
      if (r.status === 'sent') throw unprocessable('Outbound item was already sent');
      if (!(await store.requeue(db, tenantId, id, deps.now()))) throw unprocessable('Outbound item was already sent');
      deps.wake();
    },
  };
}
export type OutboundService = ReturnType<typeof createOutboundService>;
