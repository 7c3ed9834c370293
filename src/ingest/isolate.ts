import type { Logger } from '../logger.js';
import type { FailureNote } from './set-aside.js';

/** One message of a failed batch, stored on its own by `store`. */
export interface Unit<I> {
  id: number;
  input: I;
}

/** What storing a failed batch message by message came to. */
export interface Apart<R> {
  /** The results of the messages stored (each committed on its own). */
  stored: Array<{ id: number; result: R }>;
  /** The messages that failed alone, each counted against itself (retry later, or set aside). */
  failed: Array<{ id: number; note: FailureNote }>;
  /** Every message of a split of two or more failed (counted because `blameAll` was set). */
  allFailed: boolean;
}

/**
 * Whether a split in which every message fails counts them (see storeApart): yes once something
 * was stored since the last such split. One per worker.
 */
export function createBlame() {
  let storedSinceFault = true;
  return {
    get all() { return storedSinceFault; },
    /** A batch or a message was stored. */
    stored() { storedSinceFault = true; },
    /** Every message of a split failed. */
    allFailed() { storedSinceFault = false; },
  };
}
export type Blame = ReturnType<typeof createBlame>;

const reasonOf = (err: unknown) => String((err as Error)?.message ?? err).slice(0, 500);

/**
 * Poison isolation (README "Set-aside mail"): a batch whose transaction failed is stored again
 * message by message, so one message that cannot be stored holds none of the others back. Each
 * message that fails alone has the try counted against it (`note`, in a transaction of its own;
 * the last allowed try sets it aside, set-aside.ts), and the caller keeps it back for a while.
 *
 * When every message of a split of two or more fails alone, the fault is more likely the
 * database's (a full disk, a database that refuses writes) than theirs: unless something was
 * stored since the last such split (`blame`), nothing is counted and the first error is thrown, so
 * the batch is retried later as before. An outage then counts at most one try against the mail it
 * holds, and no good mail is set aside for it, while poison messages that meet in one batch are
 * still counted whenever mail flows between their tries. `store` answers null for a message it
 * found no longer queued (another node took it): neither stored nor failed. A batch of one
 * message is always counted: nothing tells its fault from the database's. The reason logged is
 * the error's message only (never the message's text).
 */
export async function storeApart<I, R>(units: Array<Unit<I>>, deps: {
  store(input: I): Promise<R | null>;
  note(id: number, reason: string): Promise<FailureNote>;
  blame: Blame;
  /** The worker is stopping: what was cut off is no failure of its message (nothing more is tried or counted). */
  stopping(): boolean;
  log: Logger;
}): Promise<Apart<R>> {
  const stored: Apart<R>['stored'] = [];
  const errors: Array<{ id: number; err: unknown }> = [];
  for (const u of units) {
    if (deps.stopping()) throw new Error('ingest stopping');
    try {
      const result = await deps.store(u.input);
      if (result !== null) stored.push({ id: u.id, result });
    } catch (err) {
      errors.push({ id: u.id, err });
    }
  }
  if (deps.stopping()) throw new Error('ingest stopping');
  const allFailed = stored.length === 0 && errors.length > 1;
  if (stored.length > 0) deps.blame.stored();
  if (allFailed) {
    const blamed = deps.blame.all;
    deps.blame.allFailed();
    if (!blamed) throw errors[0].err;
  }
  const failed: Apart<R>['failed'] = [];
  for (const { id, err } of errors) {
    const reason = reasonOf(err);
    const note = await deps.note(id, reason);
    failed.push({ id, note });
    if (note.outcome === 'set-aside') deps.log.error({ inbound_id: id, attempts: note.attempts, reason }, 'inbound message set aside: it failed every try to store it (mailstead set-aside list)');
    else if (note.outcome === 'retry') deps.log.warn({ inbound_id: id, attempts: note.attempts, reason }, 'inbound message could not be stored; the rest of its batch went on, it is tried again later');
  }
  return { stored, failed, allFailed };
}
