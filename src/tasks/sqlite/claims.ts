import type { Db } from '../../db/connection.js';
import type { TaskClaims } from '../ports.js';
import { createTaskStore } from '../store.js';

/**
 * SQLite: one process runs the queue over one connection. A wake-up after enqueue can only claim
 * once the caller's transaction released that connection, i.e. after the commit; every task left
 * running at start was left by a crash of this very process.
 */
export function sqliteClaims(db: Db): TaskClaims {
  const store = createTaskStore();
  return {
    afterEnqueue: async (_trx, wake) => { setImmediate(wake); },
    listen: async () => {},
    claimNext: (now, kinds) => store.claimNext(db, now, kinds),
    release: async () => {},
    recover: (atStart) => (atStart ? store.recoverRunning(db) : Promise.resolve(0)),
  };
}
