import type { Db } from '../db/connection.js';
import type { TaskRow } from './store.js';

/**
 * How the queue takes tasks, and tells a crashed runner's tasks from running ones: the part of the
 * queue that differs between one SQLite process and many nodes on PostgreSQL.
 */
export interface TaskClaims {
  /** Inside the enqueuing transaction: `wake` runs (on every node) once that transaction commits. */
  afterEnqueue(trx: Db, wake: () => void): Promise<void>;
  /** Calls `wake` when work may have arrived from elsewhere (another node). */
  listen(wake: () => void): Promise<void>;
  /** Takes the next due task of one of `kinds` and marks it running; each task goes to one claimer. */
  claimNext(now: number, kinds: string[]): Promise<TaskRow | undefined>;
  /** The task stopped running here (its completion, failure or requeue is committed). */
  release(id: number): Promise<void>;
  /**
   * Queues again the tasks left `running` by a runner that is gone; returns how many. `atStart`:
   * called before this process runs anything.
   */
  recover(atStart: boolean): Promise<number>;
}
