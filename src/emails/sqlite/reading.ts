import type { Db } from '../../db/connection.js';
import { databaseFileOf, onDestroy, readerOf } from '../../db/reader.js';
import { ftsMatch } from '../fts.js';
import type { EmailReading } from '../reading-port.js';
import { createReadPool, type ReadPool } from '../read-pool.js';
import { runReadJob, type ReadJob } from '../reading.js';
import { createEmailReads, type EmailReads } from '../store.js';

/**
 * The hot reads on SQLite: prepared statements on a read-only connection of their own
 * (db/reader.ts), and `readThreads` reader threads on the same file, set up on first use.
 */
export function createSqliteEmailReading(db: Db, readThreads: number): EmailReading {
  let reads: EmailReads | null = null;
  let pool: ReadPool | null = null;
  let starting: Promise<EmailReads> | null = null;

  /** The read queries on this thread, and the reader threads, set up on first use. */
  function ready(): EmailReads | Promise<EmailReads> {
    if (reads) return reads;
    starting ??= (async () => {
      const r = createEmailReads(await readerOf(db));
      if (readThreads > 0) {
        const p = createReadPool({ file: await databaseFileOf(db), threads: readThreads, inline: (job) => runReadJob(r, job) });
        onDestroy(db, () => p.close());
        pool = p;
      }
      reads = r;
      return r;
    })().catch((err: unknown) => { starting = null; throw err; });
    return starting;
  }

  return {
    searchMatch: ftsMatch,
    /** From a reader thread when one is free, else run here. */
    async body(job: ReadJob): Promise<string | null> {
      const r = reads ?? await ready();
      return (pool ? pool.run(job) : null) ?? runReadJob(r, job);
    },
  };
}
