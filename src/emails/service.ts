import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { dialectOf } from '../db/dialect.js';
import { pgPoolOf } from '../db/postgres.js';
import { databaseFileOf, onDestroy, readerOf } from '../db/reader.js';
import { notFound } from '../errors.js';
import type { MailChanges } from './changes.js';
import { createEventRecorder, type EventRecorder, type QueuedHint } from '../webhooks/events.js';
import { decodeListCursor, decodeSyncCursor } from './cursor.js';
import { ftsMatch } from './fts.js';
import { markerAt, type Markers } from '../mailstore/markers.js';
import { createPgEmailReads, type PgEmailReadsRoot } from './pg-reads.js';
import { runPgReadJob } from './pg-reading.js';
import { encodePgSearch, pgSearch } from './pg-search.js';
import { createReadPool, defaultReadThreads, type ReadPool } from './read-pool.js';
import { runReadJob, type ListQuery, type PageMeta, type ReadJob, type SyncQuery } from './reading.js';
import { createEmailReads, type EmailReads, type EmailStore, type Position } from './store.js';

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
function listQuery(tenantId: number, r: ListRequest, postgres: boolean): { query: ListQuery } | { empty: { data: never[]; meta: PageMeta } } {
  const filter = { tenantId, mailboxId: r.mailboxId, folder: r.folder, unread: r.unread, since: r.since, before: r.before };
  const cursor = r.cursor ? decodeListCursor(r.cursor) : null;
  const searched = r.q !== undefined && r.q.trim() !== '';
  const match = !searched ? null : postgres ? encodeIfAny(pgSearch(r.q!)) : ftsMatch(r.q!);
  if (searched && match === null) return { empty: { data: [], meta: { next_cursor: null, prev_cursor: null, per_page: r.perPage } } };
  const pos: Position | null = cursor ? { receivedAt: cursor.receivedAt, id: cursor.id, side: cursor.direction === 'next' ? 'below' : 'above' } : null;
  return { query: { filter, match, pos, perPage: r.perPage } };
}

const encodeIfAny = (s: ReturnType<typeof pgSearch>) => (s === null ? null : encodePgSearch(s));

/** A sync request decoded; refuses a malformed cursor with 422. */
const syncQuery = (tenantId: number, r: SyncRequest): SyncQuery => ({
  tenantId,
  from: r.cursor ? { above: decodeSyncCursor(r.cursor).marker } : { atLeast: markerAt(r.since) },
  perPage: r.perPage,
  mailboxId: r.mailboxId,
});

/**
 * Connections of each PostgreSQL reader thread's pool: with two threads, six statements in flight
 * keep two cores busy (a read waits on the server well under a millisecond), and a node adds only
 * these to its pool's ten, so a few nodes stay inside PostgreSQL's default of 100 connections.
 */
const PG_READER_CONNECTIONS = 3;

/**
 * Reading, marking and deleting stored mail, and sync. On SQLite reads run as prepared statements
 * on a read-only connection of their own (src/db/reader.ts); on PostgreSQL as prepared statements
 * on the pool (pg-reads.ts). In the built server either runs in reader threads (read-pool.ts), on
 * PostgreSQL each with a pool of its own. Either way they answer with the JSON text of the
 * response body (reading.ts).
 */
export function createEmailService({ db, store, markers, events, clock, changes, readThreads = defaultReadThreads() }: {
  db: Db; store: EmailStore; markers: Markers; events: EventRecorder; clock: Clock; readThreads?: number;
  /** Told of each committed read and delete (IMAP IDLE wakes on it). */
  changes?: MailChanges;
}) {
  const postgres = dialectOf(db) === 'postgres';
  // On PostgreSQL the reads run asynchronously (pg-reads.ts), in reader threads with pools of
  // their own when those run, else on the pool here; the rest is SQLite's.
  const pgReads: PgEmailReadsRoot | null = postgres ? createPgEmailReads(db) : null;
  const pgPool: ReadPool | null = pgReads && readThreads > 0
    ? createReadPool({ postgres: { url: pgPoolOf(db).url, connections: PG_READER_CONNECTIONS }, threads: readThreads, inline: (job) => runPgReadJob(pgReads, job) })
    : null;
  if (pgPool) onDestroy(db, () => pgPool.close());
  let reads: EmailReads | null = null;
  let pool: ReadPool | null = null;
  let starting: Promise<EmailReads> | null = null;

  /** The read queries on this thread, and the reader threads, set up on first use. */
  function ready(): EmailReads | Promise<EmailReads> {
    if (reads) return reads;
    starting ??= (async () => {
      const r = createEmailReads(await readerOf(db));
      if (readThreads > 0) {
        const p = createReadPool({ file: await databaseFileOf(db), threads: readThreads, inline: (job) => runReadJob(r, job) });
        onDestroy(db, () => p.close());
        pool = p;
      }
      reads = r;
      return r;
    })().catch((err: unknown) => { starting = null; throw err; });
    return starting;
  }

  /**
   * Runs a writing transaction that records events. On SQLite the recorder's hint reaches the
   * webhook engine after the commit by itself (the engine's claim waits for the one connection);
   * on PostgreSQL the claim runs on another pooled connection and could look before the commit, so
   * the hints are kept and handed over once the transaction has committed.
   */
  async function recording<T>(fn: (recorder: EventRecorder) => Promise<T>): Promise<T> {
    if (!postgres) return fn(events);
    const hints: QueuedHint[] = [];
    const out = await fn(createEventRecorder({ clock, onQueued: (h) => { hints.push(...h); } }));
    // The recorder reports its hints on the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    events.notify(hints);
    return out;
  }

  /** A read job's body: from a reader thread when one is free, else run here. */
  async function body(job: ReadJob): Promise<string | null> {
    if (pgReads) return (pgPool ? pgPool.run(job) : null) ?? runPgReadJob(pgReads, job);
    const r = reads ?? await ready();
    return (pool ? pool.run(job) : null) ?? runReadJob(r, job);
  }

  return {
    /** One page of the tenant's mail, newest first (reading.ts `listEmails`), as the JSON text of the success body. */
    async listBody(tenantId: number, r: ListRequest): Promise<string> {
      const q = listQuery(tenantId, r, postgres);
      if ('empty' in q) return JSON.stringify({ status: 'success', ...q.empty });
      return (await body({ op: 'list', query: q.query }))!;
    },

    /** A live email of the tenant (reading.ts `getEmail`) as the JSON text of the success body; 404 otherwise. */
    async getBody(tenantId: number, id: number): Promise<string> {
      const text = await body({ op: 'get', tenantId, id });
      if (text === null) throw notFound('Email not found');
      return text;
    },

    /** Changes since a time or after a cursor, oldest first, with tombstones (reading.ts `syncEmails`), as the JSON text of the success body. */
    async syncBody(tenantId: number, r: SyncRequest): Promise<string> {
      return (await body({ op: 'sync', query: syncQuery(tenantId, r) }))!;
    },

    /** Sets read_at once and records `email.read` in the same transaction; repeating it changes nothing. */
    async markRead(tenantId: number, id: number): Promise<void> {
      const changed = await recording((recorder) => db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const e = await store.state(trx, tenantId, id);
        if (!e) throw notFound('Email not found');
        if (e.read_at !== null) return null;
        if (!(await store.markRead(trx, id, clock.now(), markers.next()))) return null;
        await recorder.record(trx, [{ tenantId, type: 'email.read', emailId: id, mailboxId: e.mailbox_id }]);
        await markers.flush(trx);
        return e.mailbox_id;
      }));
      if (changed !== null) changes?.committed([changed]);
    },

    /** Soft-deletes (a tombstone for sync), frees its quota and records `email.deleted` in the same transaction. */
    async remove(tenantId: number, id: number): Promise<void> {
      const mailboxId = await recording((recorder) => db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const e = await store.state(trx, tenantId, id);
        if (!e || !(await store.softDelete(trx, id, clock.now(), markers.next()))) throw notFound('Email not found');
        // Soft-deleted mail is out of the user's reach, so it no longer counts against the quota.
        await store.releaseBytes(trx, e.mailbox_id, e.size);
        await recorder.record(trx, [{ tenantId, type: 'email.deleted', emailId: id, mailboxId: e.mailbox_id }]);
        await markers.flush(trx);
        return e.mailbox_id;
      }));
      changes?.committed([mailboxId]);
    },
  };
}
export type EmailService = ReturnType<typeof createEmailService>;
