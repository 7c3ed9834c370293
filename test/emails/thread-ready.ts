import type { ExecutionContext } from 'ava';
import type { ReadPool } from '../../src/emails/read-pool.js';
import type { ReadJob } from '../../src/emails/reading.js';

/**
 * Starts a pool's reader thread: two reads in one turn of the event loop overlap, so the thread
 * starts; until it is ready the caller reads itself (`run` answers null). Resolves once it is ready.
 */
export async function threadReady(t: ExecutionContext, pool: ReadPool, job: ReadJob): Promise<void> {
  t.is(pool.run(job), null, 'no thread ready yet: the caller reads itself');
  t.is(pool.run(job), null);
  for (const deadline = Date.now() + 30_000; pool.ready() === 0;) {
    if (Date.now() > deadline) throw new Error('reader thread did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
}
