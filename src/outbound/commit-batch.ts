import type { Db, Trx } from '../db/connection.js';

type Work = (trx: Trx) => Promise<void>;

/**
 * Commits the outcomes of deliveries that finish in the same event-loop turn in one transaction:
 * each transaction of the main connection waits for SQLite's write lock (BEGIN IMMEDIATE) behind
 * the storage thread's batches, so one per delivered message kept the main thread blocked on it.
 * Should the shared transaction fail, each piece of work is committed alone, so one bad outcome
 * (a DSN that cannot be queued) cannot roll back the others' "sent".
 */
export function createCommitBatcher(db: Db) {
  let queue: Array<{ work: Work; resolve: () => void; reject: (err: unknown) => void }> = [];

  async function flush(): Promise<void> {
    const batch = queue;
    queue = [];
    try {
      await db.transaction().execute(async (trx) => { for (const b of batch) await b.work(trx); });
      for (const b of batch) b.resolve();
    } catch (err) {
      if (batch.length === 1) { batch[0].reject(err); return; }
      for (const b of batch) {
        await db.transaction().execute(b.work).then(b.resolve, b.reject);
      }
    }
  }

  /** Runs `work` in a transaction shared with the work submitted in the same turn; resolves once committed. */
  return (work: Work): Promise<void> => new Promise((resolve, reject) => {
    if (queue.length === 0) setImmediate(() => void flush());
    queue.push({ work, resolve, reject });
  });
}
export type CommitBatcher = ReturnType<typeof createCommitBatcher>;
