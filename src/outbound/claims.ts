import type { Db } from '../db/connection.js';
import { lockKeys, type NodeSession } from '../db/pg-session.js';
import type { OutboundRow, OutboundStore } from '../mailstore/outbound-store.js';

/**
 * How the delivery worker takes due items so that each is tried by one sender at a time, and how
 * senders are woken: the part that differs between one SQLite process and many nodes on one
 * PostgreSQL database. An item stays `queued` while it is tried (its outcome is written after);
 * a claim is what keeps another sender off it meanwhile.
 */
export interface OutboundClaims {
  /** Due items (oldest due first) now this worker's to try; `busy` are the ones it is trying already. */
  next(now: number, limit: number, busy: number[]): Promise<OutboundRow[]>;
  /** The outcome of these items is committed (or they were not tried): others may take them again. */
  release(ids: number[]): Promise<void>;
  /** Calls `wake` when another node asks every worker to look at the queue. */
  listen(wake: () => void): Promise<void>;
  /** Asks every worker (on every node) to look at the queue now. */
  wakeAll(): Promise<void>;
}

/** SQLite: one process sends; its in-memory `busy` set is the claim, and a crash leaves nothing claimed. */
export function sqliteOutboundClaims(db: Db, store: OutboundStore, wakeHere: () => void): OutboundClaims {
  return {
    next: (now, limit, busy) => store.due(db, now, limit, busy),
    release: async () => {},
    listen: async () => {},
    wakeAll: async () => { wakeHere(); },
  };
}

/** The NOTIFY channel that wakes every node's outbound worker. */
export const OUTBOUND_CHANNEL = 'mailstead_outbound';
/** The first key of the advisory locks of items being tried ('outb'). */
const LOCK_CLASS = 0x6f757462;

/**
 * PostgreSQL, any number of nodes: a claim takes a session advisory lock per item on this node's
 * own connection (pg-session.ts), held while the item is tried and until its outcome is committed.
 * One statement: due rows under no such lock (pg_locks: this node's own items under way and other
 * nodes' alike), FOR UPDATE SKIP LOCKED so two claims at the same instant never pick the same row,
 * and a try-lock on each, which settles a claim racing one that just committed. pg_locks lists the
 * locks of every database of the cluster, so only this database's count: another Mailstead on the
 * same cluster has items with the same ids. A node that dies
 * drops its locks with its connection, and its items, still `queued`, are simply due again.
 */
export function postgresOutboundClaims(session: NodeSession): OutboundClaims {
  return {
    async next(now, limit) {
      const { rows } = await session.query<OutboundRow>(`
        WITH candidates AS MATERIALIZED (
          SELECT id FROM outbound
          WHERE status = 'queued' AND next_attempt_at <= $1
            AND id NOT IN (SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND classid = ($3::int4)::oid AND objsubid = 2
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
          ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
        ), mine AS MATERIALIZED (
          SELECT id FROM candidates WHERE pg_try_advisory_lock($3::int4, (id % 2147483647)::int4)
        )
        SELECT o.* FROM outbound AS o JOIN mine ON mine.id = o.id ORDER BY o.next_attempt_at, o.id`, [now, limit, LOCK_CLASS]);
      return rows;
    },
    async release(ids) {
      if (ids.length === 0) return;
      await session.query('SELECT count(pg_advisory_unlock($1, k)) FROM unnest($2::int4[]) AS k', [LOCK_CLASS, lockKeys(ids)]);
    },
    listen: (wake) => session.listen(OUTBOUND_CHANNEL, wake),
    async wakeAll() {
      await session.query(`SELECT pg_notify('${OUTBOUND_CHANNEL}', '')`);
    },
  };
}

