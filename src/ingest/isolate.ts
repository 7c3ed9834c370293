import type { Logger } from '../logger.js';
import type { FailureNote } from '../mailstore/set-aside.js';

/** One message of a failed batch, stored on its own by `store`. */
export interface Unit<I> {
  id: number;
  input: I;
}

/** What storing a failed batch in parts came to. */
export interface Apart<R> {
  /** The parts stored (each committed on its own), with the messages in each. */
  stored: Array<{ ids: number[]; result: R }>;
  /** The messages that failed alone, each counted against itself (retry later, or set aside). */
  failed: Array<{ id: number; note: FailureNote }>;
  /** Messages left as they were, nothing counted: the fault looked like the database's (they wait a while). */
  deferred: number[];
}

/**
 * Whether a split whose parts all fail goes on down to single messages and counts them (see
 * storeApart): yes once something was stored since the last such split. One per worker.
 */
export function createBlame() {
  let storedSinceFault = true;
  return {
    get all() { return storedSinceFault; },
    /** A batch or a part of one was stored. */
    stored() { storedSinceFault = true; },
    /** Every part of a split failed. */
    allFailed() { storedSinceFault = false; },
  };
}
export type Blame = ReturnType<typeof createBlame>;

const reasonOf = (err: unknown) => String((err as Error)?.message ?? err).slice(0, 500);

/**
 * Poison isolation (README, Operations, "Set-aside mail"): a batch whose transaction failed is
 * stored again in halves, and a half that fails in halves again, down to single messages, so one
 * message that cannot be stored holds none of the others back and costs some 2 log2(n) transactions
 * of a batch of n, not n. A message that fails alone has the try counted against it (`note`, in a
 * transaction of its own; the last allowed try sets it aside, set-aside.ts), and the caller keeps it
 * back for a while. A batch of one message is tried once more alone.
 *
 * When both halves of a split fail, the fault is more likely the database's (a full disk, a
 * database that refuses writes) than the messages': unless something was stored since the last
 * such split (`blame`), the split stops there and its messages are `deferred`, nothing counted.
 * An outage then costs a few transactions per batch and counts at most a try or two against the
 * mail it holds, so no good mail is set aside for it, while poison messages that meet in one batch
 * are still counted whenever mail flows between their tries. A message alone is always counted:
 * nothing tells its fault from the database's. `store` answers null for a part it found no longer
 * queued (another node took it). The reason logged is the error's message only (never the text).
 */
export async function storeApart<I, R>(units: Array<Unit<I>>, deps: {
  store(inputs: I[]): Promise<R | null>;
  note(id: number, reason: string): Promise<FailureNote>;
  blame: Blame;
  /** The worker is stopping: what was cut off is no failure of its message (nothing more is tried or counted). */
  stopping(): boolean;
  log: Logger;
}): Promise<Apart<R>> {
  const out: Apart<R> = { stored: [], failed: [], deferred: [] };
  const errors: Array<{ id: number; err: unknown }> = [];

  /** Stores a part; the error when it failed. */
  async function attempt(part: Array<Unit<I>>): Promise<{ err: unknown } | null> {
    if (deps.stopping()) throw new Error('ingest stopping');
    try {
      const result = await deps.store(part.map((u) => u.input));
      if (result !== null) {
        out.stored.push({ ids: part.map((u) => u.id), result });
        deps.blame.stored();
      }
      return null;
    } catch (err) {
      return { err };
    }
  }

  /** Stores a part of two or more messages that failed whole, in halves. */
  async function split(part: Array<Unit<I>>): Promise<void> {
    const mid = Math.ceil(part.length / 2);
    const failed: Array<{ half: Array<Unit<I>>; err: unknown }> = [];
    for (const half of [part.slice(0, mid), part.slice(mid)]) {
      const f = await attempt(half);
      if (f) failed.push({ half, err: f.err });
    }
    if (failed.length === 2) {
      if (!deps.blame.all) { out.deferred.push(...part.map((u) => u.id)); return; }
      deps.blame.allFailed();
    }
    for (const { half, err } of failed) {
      if (half.length === 1) errors.push({ id: half[0].id, err });
      else await split(half);
    }
  }

  if (units.length === 1) {
    const f = await attempt(units);
    if (f) errors.push({ id: units[0].id, err: f.err });
  } else if (units.length > 1) {
    await split(units);
  }
  if (deps.stopping()) throw new Error('ingest stopping');
  for (const { id, err } of errors) {
    const reason = reasonOf(err);
    const note = await deps.note(id, reason);
    out.failed.push({ id, note });
    if (note.outcome === 'set-aside') deps.log.error({ inbound_id: id, attempts: note.attempts, reason }, 'inbound message set aside: it failed every try to store it (mailstead set-aside list)');
    else if (note.outcome === 'retry') deps.log.warn({ inbound_id: id, attempts: note.attempts, reason }, 'inbound message could not be stored; the rest of its batch went on, it is tried again later');
  }
  return out;
}
