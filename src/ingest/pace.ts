/**
 * Rows per batch transaction when no mail is arriving: large batches share the FTS5 and commit
 * cost. 128, not 256: draining a backlog, 256-row batches held ~25 MB more in flight (RSS peaks
 * 258-264 MB against 231-239) for no faster drain (docs/PERFORMANCE.md, "Storage pacing and the
 * in-flow bound").
 */
export const BATCH_ROWS = 128;
/**
 * Rows per batch while mail arrives and storage does not yield (a backlog past MAX_BACKLOG_MS, or
 * arrivals past MAX_BURST_MS): parsing, storing and accepting then run at once, and 256-row batches
 * held ~30 MB more in flight across the threads (RSS peaks 269-287 MB against 238-255, at the same
 * CPU per message; docs/PERFORMANCE.md, "Storage pacing and the in-flow bound").
 */
export const LOADED_BATCH_ROWS = 64;
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
/**
 * The most storage work (in estimated milliseconds) storage lets wait while it yields to arriving
 * mail. Past it, batches run back to back without pauses until the backlog is below it again, so mail is
 * listed within seconds of its 250 under a sustained load storage can keep up with, instead of only
 * once the load stops (docs/PERFORMANCE.md, "Storage pacing and the in-flow bound"). Well under
 * MAX_INFLOW_BACKLOG_MS: senders are only slowed once storage has stopped yielding to them.
 */
export const MAX_BACKLOG_MS = 2_000;
/**
 * Storage time per queued row assumed until batches of LOADED_BATCH_ROWS or more have measured it
 * (this machine's drain of a large backlog, 0.23-0.29 ms per row), and the least the in-flow bound
 * assumes whatever was measured (worker.ts).
 */
export const DEFAULT_DRAIN_MS_PER_ROW = 0.25;

/** What the worker knows when it picks its next batch (milliseconds of a monotonic clock). */
export interface PaceInput {
  now: number;
  lastAcceptAt: number;
  lastApiAcceptAt: number;
  /** When the current stretch of arriving mail began (null: none arriving). */
  busySince: number | null;
  /** Storage time per row of recent batches. */
  msPerRow: number;
  /** Estimated milliseconds to store everything accepted and not yet stored. */
  backlogMs: number;
}

/**
 * The ingest worker's pace for its next batch: while mail arrives, small batches followed by a
 * pause (`yielding`), for up to MAX_BURST_MS of continuous arrivals and while the backlog is under
 * MAX_BACKLOG_MS; past either, batches of LOADED_BATCH_ROWS back to back; with nothing arriving,
 * full batches. API mail (committed by the storage thread, so waiting behind a batch) keeps
 * batches small while it arrives. Journaled SMTP mail never waits for a batch.
 */
export function pace(p: PaceInput): { rows: number; yielding: boolean; busySince: number | null } {
  const busy = p.now - p.lastAcceptAt < BUSY_WINDOW_MS;
  const busySince = busy ? p.busySince ?? p.now : null;
  const yielding = busy && p.now - busySince! < MAX_BURST_MS && p.backlogMs < MAX_BACKLOG_MS;
  const small = yielding || p.now - p.lastApiAcceptAt < BUSY_WINDOW_MS;
  const rows = small ? Math.max(4, Math.min(BATCH_ROWS, Math.floor(BUSY_BATCH_MS / p.msPerRow))) : busy ? LOADED_BATCH_ROWS : BATCH_ROWS;
  return { rows, yielding, busySince };
}

/**
 * The backlog (in milliseconds of storage work, at the rate storage drains with nothing arriving)
 * past which accepting SMTP mail slows down, like Postfix's in_flow_delay: senders that outrun
 * storage wait a little for their 250s, so neither the queue nor the time from a 250 to the
 * listing grows without end. It is the promise "listed within 5 s of its 250" (issue 6) kept under
 * overload: what a burst leaves behind its last 250 drains in about this long. The acknowledged
 * rate then follows what the machine stores end to end plus this much queue; a 10 s bound
 * acknowledged ~10 % more of a 20 s burst and listed its last message up to 8 s after its 250
 * (docs/PERFORMANCE.md, "Storage pacing and the in-flow bound").
 */
export const MAX_INFLOW_BACKLOG_MS = 4_500;
/** The longest an acknowledgement is held back: well inside an SMTP client's patience and the p99 target. */
export const MAX_INFLOW_DELAY_MS = 20;
/** Milliseconds of delay per millisecond of backlog past MAX_INFLOW_BACKLOG_MS (a proportional brake, not a wall). */
export const INFLOW_DELAY_PER_BACKLOG_MS = 1 / 100;

/** How long to hold an SMTP acknowledgement back for a backlog of `backlogMs` (0 under the bound). */
export function inflowDelayMs(backlogMs: number): number {
  if (!(backlogMs > MAX_INFLOW_BACKLOG_MS)) return 0;
  return Math.min(MAX_INFLOW_DELAY_MS, (backlogMs - MAX_INFLOW_BACKLOG_MS) * INFLOW_DELAY_PER_BACKLOG_MS);
}
