/** One job's outcome in a group: its result, or the error to answer it with. */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Group commit: jobs submitted while a commit is under way wait and then share the next one, so
 * one transaction (and one fsync) serves many callers, and each caller is answered only after the
 * commit that holds its job is durable. `commit` gets the jobs in arrival order and returns one
 * outcome per job; if it throws, every job of that group fails with the error. `durable` makes the
 * commit survive a power cut (a WAL fsync off the main thread); the next group commits while the
 * previous one is being synced.
 */
export function createGroupCommit<J, R>(commit: (jobs: J[]) => Promise<Outcome<R>[]>, durable: () => Promise<void>, maxBatch = 256) {
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
          durable().then(
            () => group.forEach((g, i) => {
              const o = outcomes[i];
              if (o.ok) g.resolve(o.value);
              else g.reject(o.error);
            }),
            (err) => { for (const g of group) g.reject(err); },
          );
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
