import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { MarkerRow } from './ports.js';
import { storageSql } from './storage-sql.js';

/** Counter values per millisecond in an update marker. */
export const MARKER_SCALE = 1000;

/** The newest marker handed out, shared between the threads that write (see createMarkers). */
export type MarkerCell = BigInt64Array;

/** A fresh cell, shareable with a worker thread. */
export const newMarkerCell = (): MarkerCell => new BigInt64Array(new SharedArrayBuffer(8));

/**
 * Update markers for sync: strictly increasing integers, `milliseconds * 1000 + counter`, so each
 * change has its own marker (a cursor never has to break ties) and the marker still reads as a
 * time (`updated_at`). Markers are taken inside write transactions, which hold SQLite's one write
 * lock, so commit order is marker order: a reader never sees a marker appear below one it already
 * saw. The server's connection and the storage thread's both write, so the last marker lives in a
 * shared cell and is advanced atomically. Time that goes backwards cannot make a marker go backwards.
 *
 * On PostgreSQL several nodes write at once, so the newest marker lives in the one-row table
 * `email_marker` (migration 013): `ready(trx)` locks that row (`FOR UPDATE`, held to the end of
 * the transaction) and raises the cell to it on every call, and `flush(trx)` writes the cell back
 * before the commit. Writers on any node thus take markers one transaction at a time, in commit
 * order. A transaction that rolls back leaves the cell ahead of the row, which only skips markers.
 */
export function createMarkers(clock: Clock, loadMax: (db: Db) => Promise<number>, opts: { cell?: MarkerCell; loaded?: boolean } = {}) {
  const cell = opts.cell ?? newMarkerCell();
  let loaded = opts.loaded ?? false;
  let loading: Promise<void> | null = null;
  // One server's markers serve one database: whether it shares a marker row is read once (on SQLite, ready() stays a flag check).
  let row: MarkerRow | null | undefined;
  const sharedRow = (db: Db): MarkerRow | null => (row === undefined ? (row = storageSql(db).markerRow) : row);

  /** Raises the cell to at least `value`. */
  function raise(value: bigint): bigint {
    for (;;) {
      const current = Atomics.load(cell, 0);
      const wanted = value > current ? value : current;
      if (wanted === current || Atomics.compareExchange(cell, 0, current, wanted) === current) return wanted;
    }
  }

  /** Several nodes: locks the shared marker row until the transaction ends and raises the cell to its value. */
  async function lockShared(trx: Db, shared: MarkerRow): Promise<void> {
    raise(BigInt(await shared.lock(trx)));
    loaded = true;
  }

  const markers = {
    /** The cell to hand a second writer (with `loaded: true` once `ready` resolved here). */
    cell,
    /**
     * Loads the largest stored marker once; call before `next` in every writing path, with the
     * transaction in hand if there is one.
     */
    ready(db: Db): Promise<void> {
      const shared = sharedRow(db);
      if (shared) return lockShared(db, shared);
      if (loaded) return Promise.resolve();
      loading ??= loadMax(db).then((max) => { raise(BigInt(max)); loaded = true; });
      return loading;
    },
    /**
     * Before a writing transaction that called `ready` commits: with a shared marker row (PostgreSQL)
     * writes the newest marker back to the row `ready` locked; on SQLite nothing (the cell is the truth there).
     */
    async flush(db: Db): Promise<void> {
      const shared = sharedRow(db);
      if (shared) await shared.raise(db, Number(Atomics.load(cell, 0)));
    },
    /** Runs `fn` between `ready(trx)` and `flush(trx)` (`trx` must be a transaction on PostgreSQL). */
    async within<T>(trx: Db, fn: () => Promise<T>): Promise<T> {
      await markers.ready(trx);
      const out = await fn();
      await markers.flush(trx);
      return out;
    },
    /** The next marker (after `ready`). */
    next(): number {
      if (!loaded) throw new Error('update markers used before ready()');
      for (;;) {
        const current = Atomics.load(cell, 0);
        const now = BigInt(Math.floor(clock.now()) * MARKER_SCALE);
        const wanted = current + 1n > now ? current + 1n : now;
        if (Atomics.compareExchange(cell, 0, current, wanted) === current) return Number(wanted);
      }
    },
  };
  return markers;
}
export type Markers = ReturnType<typeof createMarkers>;

/** The time (ms) a marker stands for. */
export const markerTime = (marker: number) => Math.floor(marker / MARKER_SCALE);
/** The smallest marker at or after a time (ms), for `since`. */
export const markerAt = (ms: number) => ms * MARKER_SCALE;
