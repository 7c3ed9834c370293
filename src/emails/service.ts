import type { Clock } from '../clock.js';
import { backendOf, type Backend } from '../db/backend.js';
import type { Db } from '../db/connection.js';
import { notFound } from '../errors.js';
import type { MailChanges } from './mail-changes.js';
import type { EmailEvent, EventRecorder } from '../webhooks/events.js';
import { decodeListCursor, decodeSyncCursor } from './cursor.js';
import { markerAt, type Markers } from '../mailstore/markers.js';
import type { EmailReading } from './reading-port.js';
import { createPostgresEmailReading } from './postgres/reading.js';
import { defaultReadThreads } from './read-pool.js';
import type { ListQuery, PageMeta, SyncQuery } from './reading.js';
import { createSqliteEmailReading } from './sqlite/reading.js';
import type { EmailStore, Position } from './store.js';

/** Page size default and bounds (DECISIONS.md section 8). */
export const DEFAULT_PER_PAGE = 25;

/** A list request after validation. */
export interface ListRequest {
  mailboxId?: number;
  /** The folder listed (every mailbox's folder of that name). */
  folder?: string;
  unread?: boolean;
  since?: number;
  before?: number;
  q?: string;
  cursor?: string;
  perPage: number;
}

/** A sync request after validation. */
export interface SyncRequest {
  since: number;
  cursor?: string;
  perPage: number;
  mailboxId?: number;
}

/**
 * A list request decoded (cursor, search text), or the answer itself when the text has nothing
 * searchable in it (it matches nothing). Refuses a malformed cursor with 422.
 */
function listQuery(tenantId: number, r: ListRequest, searchMatch: EmailReading['searchMatch']): { query: ListQuery } | { empty: { data: never[]; meta: PageMeta } } {
  const filter = { tenantId, mailboxId: r.mailboxId, folder: r.folder, unread: r.unread, since: r.since, before: r.before };
  const cursor = r.cursor ? decodeListCursor(r.cursor) : null;
  const searched = r.q !== undefined && r.q.trim() !== '';
  const match = searched ? searchMatch(r.q!) : null;
  if (searched && match === null) return { empty: { data: [], meta: { next_cursor: null, prev_cursor: null, per_page: r.perPage } } };
  const pos: Position | null = cursor ? { receivedAt: cursor.receivedAt, id: cursor.id, side: cursor.direction === 'next' ? 'below' : 'above' } : null;
  return { query: { filter, match, pos, perPage: r.perPage } };
}

/** A sync request decoded; refuses a malformed cursor with 422. */
const syncQuery = (tenantId: number, r: SyncRequest): SyncQuery => ({
  tenantId,
  from: r.cursor ? { above: decodeSyncCursor(r.cursor).marker } : { atLeast: markerAt(r.since) },
  perPage: r.perPage,
  mailboxId: r.mailboxId,
});

/**
 * Reading, marking and deleting stored mail, and sync. On SQLite reads run as prepared statements
 * on a read-only connection of their own (src/db/reader.ts); on PostgreSQL as prepared statements
 * on the pool (postgres/reads.ts). In the built server either runs in reader threads (read-pool.ts), on
 * PostgreSQL each with a pool of its own. Either way they answer with the JSON text of the
 * response body (reading.ts).
 */
export function createEmailService({ db, backend = backendOf(db), store, markers, events, clock, changes, readThreads = defaultReadThreads() }: {
  db: Db; backend?: Backend; store: EmailStore; markers: Markers; events: EventRecorder; clock: Clock; readThreads?: number;
  /** Told of each committed read and delete (IMAP IDLE wakes on it). */
  changes?: MailChanges;
}) {
  const reading = backend.choose({ sqlite: createSqliteEmailReading, postgres: createPostgresEmailReading })(db, readThreads);

  return {
    /** One page of the tenant's mail, newest first (reading.ts `listEmails`), as the JSON text of the success body. */
    async listBody(tenantId: number, r: ListRequest): Promise<string> {
      const q = listQuery(tenantId, r, reading.searchMatch);
      if ('empty' in q) return JSON.stringify({ status: 'success', ...q.empty });
      return (await reading.body({ op: 'list', query: q.query }))!;
    },

    /** A live email of the tenant (reading.ts `getEmail`) as the JSON text of the success body; 404 otherwise. */
    async getBody(tenantId: number, id: number): Promise<string> {
      const text = await reading.body({ op: 'get', tenantId, id });
      if (text === null) throw notFound('Email not found');
      return text;
    },

    /** Changes since a time or after a cursor, oldest first, with tombstones (reading.ts `syncEmails`), as the JSON text of the success body. */
    async syncBody(tenantId: number, r: SyncRequest): Promise<string> {
      return (await reading.body({ op: 'sync', query: syncQuery(tenantId, r) }))!;
    },

    /** Sets read_at once and records `email.read` in the same transaction; repeating it changes nothing. */
    async markRead(tenantId: number, id: number): Promise<void> {
      const changed = await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const e = await store.state(trx, tenantId, id);
        if (!e) throw notFound('Email not found');
        if (e.read_at !== null) return null;
        if (!(await store.markRead(trx, id, clock.now(), markers.next()))) return null;
        await events.record(trx, [{ tenantId, type: 'email.read', emailId: id, mailboxId: e.mailbox_id }]);
        await markers.flush(trx);
        return e.mailbox_id;
      });
      if (changed !== null) changes?.committed([changed]);
    },

    /**
     * Sets read_at of live unread emails of the tenant in one transaction with one `email.read`
     * each (IMAP \Seen on a set); gone or already read ones are passed over. `alongside` runs
     * first in the same transaction (IMAP's other flag writes), so a refused write changes
     * nothing. Answers the ids this call marked read.
     */
    async markReadMany<T>(tenantId: number, ids: number[], alongside?: (trx: Db) => Promise<T>): Promise<{ marked: number[]; alongside: T | undefined }> {
      const out = await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const before = alongside ? await alongside(trx) : undefined;
        const marked: number[] = [];
        const mailboxIds = new Set<number>();
        const toRecord: EmailEvent[] = [];
        for (const id of ids) {
          const e = await store.state(trx, tenantId, id);
          if (!e || e.read_at !== null) continue;
          if (!(await store.markRead(trx, id, clock.now(), markers.next()))) continue;
          marked.push(id);
          mailboxIds.add(e.mailbox_id);
          toRecord.push({ tenantId, type: 'email.read', emailId: id, mailboxId: e.mailbox_id });
        }
        await events.record(trx, toRecord);
        await markers.flush(trx);
        return { marked, mailboxIds: [...mailboxIds], alongside: before };
      });
      if (out.mailboxIds.length > 0) changes?.committed(out.mailboxIds);
      return { marked: out.marked, alongside: out.alongside };
    },

    /** Soft-deletes (a tombstone for sync), frees its quota and records `email.deleted` in the same transaction. */
    async remove(tenantId: number, id: number): Promise<void> {
      const mailboxId = await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const e = await store.state(trx, tenantId, id);
        if (!e || !(await store.softDelete(trx, id, clock.now(), markers.next()))) throw notFound('Email not found');
        // Soft-deleted mail is out of the user's reach, so it no longer counts against the quota.
        await store.releaseBytes(trx, e.mailbox_id, e.size);
        await events.record(trx, [{ tenantId, type: 'email.deleted', emailId: id, mailboxId: e.mailbox_id }]);
        await markers.flush(trx);
        return e.mailbox_id;
      });
      changes?.committed([mailboxId]);
    },
  };
}
export type EmailService = ReturnType<typeof createEmailService>;
