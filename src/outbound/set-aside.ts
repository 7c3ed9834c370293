import type { Db } from '../db/connection.js';
import { iso } from '../format.js';
import type { IngestStore } from '../mailstore/inbound-store.js';
import type { OutboundStore } from '../mailstore/outbound-store.js';
import { SET_ASIDE_LIST_MAX, type SetAsideQueue } from '../set-aside/queue.js';
import { SET_ASIDE_REPLY } from './worker.js';

/**
 * Outbound items set aside: failed by the worker after repeated local errors (worker.ts `fault`;
 * their DSN went out then), told apart from remote refusals by their reply. A retry queues one for
 * a try now, with the worker's few tries at it again (no second DSN: one went out). A discard
 * deletes it, with the message bytes and the inbound message only it still held (the raw file of
 * that message is left to ingest's orphan sweep, as the outbound prune does).
 */
export function createOutboundSetAside(deps: {
  db: Db; store: OutboundStore; ingestStore: IngestStore; now: () => number;
  /** Tells the worker (every node's, on PostgreSQL) that an item is due now. */
  wake: () => Promise<void> | void;
}): SetAsideQueue {
  const { db, store } = deps;
  return {
    async list(limit = SET_ASIDE_LIST_MAX) {
      const rows = await store.failedWith(db, SET_ASIDE_REPLY, { limit });
      return rows.map((r) => ({
        id: r.id, tenant_id: r.tenant_id, kind: r.kind, mail_from: r.mail_from, rcpt_to: r.rcpt_to,
        attempts: r.attempts, reason: r.last_response, created_at: iso(r.created_at), set_aside_at: iso(r.updated_at),
      }));
    },
    count: () => store.countFailedWith(db, SET_ASIDE_REPLY),
    async retry(id) {
      const queued = await store.requeueFailedWith(db, id, SET_ASIDE_REPLY, deps.now());
      if (queued) await deps.wake();
      return queued;
    },
    async discard(id) {
      return db.transaction().execute(async (trx) => {
        const [row] = await store.failedWith(trx, SET_ASIDE_REPLY, { limit: 1, id });
        if (!row) return false;
        await store.remove(trx, [row.id], row.message_ref === null ? [] : [row.message_ref]);
        if (row.inbound_id !== null) await deps.ingestStore.dropUnreferenced(trx, [row.inbound_id]);
        return true;
      });
    },
  };
}
