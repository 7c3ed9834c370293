import type { Outcome } from '../group-commit.js';

/**
 * Group commit with several groups in flight at once (PostgreSQL's SMTP acknowledgements): each
 * group is a statement on a connection of its own from the pool, and PostgreSQL flushes the WAL of
 * concurrent commits together, so a message that arrives while a group is being committed need not
 * wait for that group's round trip and fsync before its own starts: it joins a group that starts
 * at the next turn of the event loop, as long as fewer than `inFlight` are under way; past that it
 * waits for one to end, gathered with the others that came meanwhile. With one group in flight
 * (group-commit.ts, what SQLite's single writer needs) an acknowledgement waits on average for
 * half a commit it is not part of, and then its own. Groups may commit in any order: nothing
 * depends on the order of queue rows of different senders.
 */
export function createOverlappingGroupCommit<J, R>(commit: (jobs: J[]) => Promise<Outcome<R>[]>, opts: { inFlight: number; maxBatch: number }) {
  let pending: Array<{ job: J; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  let running = 0;
  let scheduled = false;

  async function run(group: typeof pending): Promise<void> {
    try {
      const outcomes = await commit(group.map((g) => g.job));
      group.forEach((g, i) => {
        const o = outcomes[i]!;
        if (o.ok) g.resolve(o.value);
        else g.reject(o.error);
      });
    } catch (err) {
      for (const g of group) g.reject(err);
    } finally {
      running--;
      schedule();
    }
  }

  /** Starts groups of what is pending on the next turn (so jobs of this turn join), while slots are free. */
  function schedule(): void {
    if (scheduled || pending.length === 0 || running >= opts.inFlight) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      while (pending.length > 0 && running < opts.inFlight) {
        const group = pending.slice(0, opts.maxBatch);
        pending = pending.slice(group.length);
        running++;
        void run(group);
      }
    });
  }

  return {
    /** Adds a job to a group commit; resolves once that commit returned (durable on PostgreSQL). */
    submit(job: J): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        pending.push({ job, resolve, reject });
        schedule();
      });
    },
    /** Jobs waiting for a group (metrics, tests). */
    get waiting() { return pending.length; },
  };
}
