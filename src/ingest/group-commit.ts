/** One job's outcome in a group: its result, or the error to answer it with. */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Group commit: jobs submitted while a commit is under way wait and then share the next one, so
 * one transaction (and one fsync) serves many callers. `commit` gets the jobs in arrival order,
 * makes them durable (the storage thread fsyncs the WAL before it answers) and returns one outcome
 * per job; if it throws, every job of that group fails with the error.
 */
export function createGroupCommit<J, R>(commit: (jobs: J[]) => Promise<Outcome<R>[]>, maxBatch = 256) {
  let pending: Array<{ job: J; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  let running = false;

  async function flush(): Promise<void> {
    running = true;
    try {
      while (pending.length > 0) {
        const group = pending.slice(0, maxBatch);
        pending = pending.slice(group.length);
        try {
          const outcomes = await commit(group.map((g) => g.job));
          group.forEach((g, i) => {
            const o = outcomes[i];
            if (o.ok) g.resolve(o.value);
            else g.reject(o.error);
          });
        } catch (err) {
          for (const g of group) g.reject(err);
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    /** Adds a job to the next group commit; resolves once that commit is durable. */
    submit(job: J): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        pending.push({ job, resolve, reject });
        // Jobs that arrive in the same turn of the event loop join; later ones wait for the next group.
        if (!running) { running = true; setImmediate(() => void flush()); }
      });
    },
    /** Jobs waiting for a commit (metrics, tests). */
    get waiting() { return pending.length; },
  };
}
