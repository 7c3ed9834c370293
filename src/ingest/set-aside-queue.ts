import type { Db } from '../db/connection.js';
import type { IngestStore } from '../mailstore/inbound-store.js';
import { setAsideStore } from '../mailstore/set-aside.js';
import { SET_ASIDE_LIST_MAX, type SetAsideQueue } from '../set-aside/queue.js';

/**
 * Inbound messages set aside (mailstore/set-aside.ts) as the operator sees them, through the API
 * and the CLI alike: listed, queued again for one more try, or deleted with their bytes.
 */
export function createInboundSetAside(deps: {
  db: Db; store: IngestStore;
  /** Removes a raw file the database no longer names (SQLite mail kept outside its row). */
  removeRaw(name: string): Promise<void>;
  /** Told after a retry queued a message (the worker looks at once; otherwise at its next poll). */
  requeued?: () => void;
}): SetAsideQueue {
  return {
    list: (limit = SET_ASIDE_LIST_MAX) => setAsideStore.list(deps.db, limit),
    count: () => setAsideStore.count(deps.db),
    async retry(id) {
      const queued = await setAsideStore.retry(deps.db, id);
      if (queued) deps.requeued?.();
      return queued;
    },
    async discard(id) {
      const gone = await deps.db.transaction().execute((trx) => setAsideStore.discard(trx, deps.store, id));
      if (gone?.rawPath) await deps.removeRaw(gone.rawPath);
      return gone !== null;
    },
  };
}
