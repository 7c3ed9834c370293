import type { Db } from '../db/connection.js';
import { iso } from '../format.js';
import { SET_ASIDE_LIST_MAX, type SetAsideQueue } from '../set-aside/queue.js';
import type { DeliveryStore } from './delivery-store.js';
import type { QueuedHint } from './event-types.js';

/**
 * Webhook deliveries set aside: rows that could not be sent as stored, or whose outcome could not
 * be written, failed after their few tries (outcomes.ts), told apart from deliveries a receiver
 * refused by the "set aside: " note in their attempt log. A retry queues one for a single attempt
 * now (same X-Webhook-Id, as a replay); a discard deletes it with its attempt log.
 */
export function createWebhookSetAside(deps: {
  db: Db; deliveries: DeliveryStore; now: () => number;
  /** Tells the engine a webhook has a delivery due (from another process: a wake-up of every engine). */
  notify: (hints: QueuedHint[]) => Promise<void> | void;
}): SetAsideQueue {
  const { db, deliveries } = deps;
  const one = (trx: Db, id: number) => deliveries.setAside(trx, { limit: 1, id }).then((r) => r[0]);
  return {
    async list(limit = SET_ASIDE_LIST_MAX) {
      const rows = await deliveries.setAside(db, { limit });
      return rows.map((r) => ({
        id: r.id, webhook_id: r.webhook_id, tenant_id: r.tenant_id, event_type: r.event_type, email_id: r.email_id, mailbox_id: r.mailbox_id,
        attempts: r.attempts, reason: r.reason, created_at: iso(r.created_at), set_aside_at: r.set_aside_at === null ? null : iso(Number(r.set_aside_at)),
      }));
    },
    count: () => deliveries.countSetAside(db),
    async retry(id) {
      const now = deps.now();
      const row = await db.transaction().execute(async (trx) => {
        const found = await one(trx, id);
        if (found) await deliveries.requeue(trx, id, now, true);
        return found;
      });
      if (!row) return false;
      await deps.notify([{ webhookId: row.webhook_id, at: now }]);
      return true;
    },
    discard: (id) => db.transaction().execute(async (trx) => {
      if (!(await one(trx, id))) return false;
      await deliveries.remove(trx, id);
      return true;
    }),
  };
}
