import type { Db } from '../../db/connection.js';
import { pgPoolOf } from '../../db/postgres.js';
import { onDestroy } from '../../db/reader.js';
import type { EmailReading } from '../reading-port.js';
import { createPgEmailReads } from './reads.js';
import { runPgReadJob } from './read-job.js';
import { encodePgSearch, pgSearch } from './search.js';
import { createReadPool } from '../read-pool.js';
import type { ReadJob } from '../reading.js';

/**
 * Connections of each PostgreSQL reader thread's pool: with two threads, six statements in flight
 * keep two cores busy (a read waits on the server well under a millisecond), and a node adds only
 * these to its pool's ten, so a few nodes stay inside PostgreSQL's default of 100 connections.
 */
const PG_READER_CONNECTIONS = 3;

/**
 * The hot reads on PostgreSQL: prepared statements sent asynchronously (reads.ts), in
 * `readThreads` reader threads with pools of their own when those run, else on the pool here.
 */
export function createPostgresEmailReading(db: Db, readThreads: number): EmailReading {
  const reads = createPgEmailReads(db);
  const pool = readThreads > 0
    ? createReadPool({ postgres: { url: pgPoolOf(db).url, connections: PG_READER_CONNECTIONS }, threads: readThreads, inline: (job) => runPgReadJob(reads, job) })
    : null;
  if (pool) onDestroy(db, () => pool.close());
  return {
    searchMatch(q: string): string | null {
      const search = pgSearch(q);
      return search === null ? null : encodePgSearch(search);
    },
    async body(job: ReadJob): Promise<string | null> {
      return (pool ? pool.run(job) : null) ?? runPgReadJob(reads, job);
    },
  };
}
