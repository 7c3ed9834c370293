/** Rows per batch transaction when no mail is arriving: large batches share the FTS5 and commit cost. */
export const BATCH_ROWS = 256;
/** While mail is arriving, a batch aims at this many milliseconds, so acknowledgements never wait long behind it. */
export const BUSY_BATCH_MS = 8;
/** While mail arrives, the pause after a batch relative to the batch's time. */
export const BUSY_PAUSE_RATIO = 12;
/** Mail accepted within this many milliseconds means the acceptor is busy. */
export const BUSY_WINDOW_MS = 100;
/**
 * How long storage yields to arriving mail (small batches and pauses) before it takes its full
 * share: a burst is absorbed by the queue, sustained load beyond what storage keeps up with is not.
 */
export const MAX_BURST_MS = 30_000;

/** What the worker knows when it picks its next batch (milliseconds of a monotonic clock). */
export interface PaceInput {
  now: number;
  lastAcceptAt: number;
  lastApiAcceptAt: number;
  /** When the current stretch of arriving mail began (null: none arriving). */
  busySince: number | null;
  /** Storage time per row of recent batches. */
  msPerRow: number;
}

/**
 * The ingest worker's pace for its next batch: while mail arrives, small batches followed by a
 * pause (`yielding`), for up to MAX_BURST_MS of continuous arrivals; then full batches back to
 * back, except that API mail (committed by the storage thread, so waiting behind a batch) keeps
 * batches small while it arrives. Journaled SMTP mail never waits for a batch.
 */
export function pace(p: PaceInput): { rows: number; yielding: boolean; busySince: number | null } {
  const busy = p.now - p.lastAcceptAt < BUSY_WINDOW_MS;
  const busySince = busy ? p.busySince ?? p.now : null;
  const yielding = busy && p.now - busySince! < MAX_BURST_MS;
  const small = yielding || p.now - p.lastApiAcceptAt < BUSY_WINDOW_MS;
  const rows = small ? Math.max(4, Math.min(BATCH_ROWS, Math.floor(BUSY_BATCH_MS / p.msPerRow))) : BATCH_ROWS;
  return { rows, yielding, busySince };
}
