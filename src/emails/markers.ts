import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';

/** Counter values per millisecond in an update marker. */
export const MARKER_SCALE = 1000;

/**
 * Update markers for sync: strictly increasing integers, `milliseconds * 1000 + counter`, so each
 * change has its own marker (a cursor never has to break ties) and the marker still reads as a
 * time (`updated_at`). Markers are taken inside the write transaction, and SQLite runs one
 * writer at a time, so commit order is marker order: a reader never sees a marker appear below
 * one it already saw. Time that goes backwards cannot make a marker go backwards.
 */
export function createMarkers(clock: Clock, loadMax: (db: Db) => Promise<number>) {
  let last: number | null = null;
  let loading: Promise<void> | null = null;
  return {
    /**
     * Loads the largest stored marker once; call before `next` in every writing path, with the
     * transaction in hand if there is one (the connection is single).
     */
    ready(db: Db): Promise<void> {
      if (last !== null) return Promise.resolve();
      loading ??= loadMax(db).then((max) => { last = Math.max(last ?? 0, max); });
      return loading;
    },
    /** The next marker (after `ready`). */
    next(): number {
      if (last === null) throw new Error('update markers used before ready()');
      last = Math.max(last + 1, clock.now() * MARKER_SCALE);
      return last;
    },
  };
}
export type Markers = ReturnType<typeof createMarkers>;

/** The time (ms) a marker stands for. */
export const markerTime = (marker: number) => Math.floor(marker / MARKER_SCALE);
/** The smallest marker at or after a time (ms), for `since`. */
export const markerAt = (ms: number) => ms * MARKER_SCALE;
