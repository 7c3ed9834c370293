import type { Clock } from '../clock.js';
import type { CronJob } from '../cron.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { DeliveryStore } from './delivery-store.js';
import type { DeliveryEngine } from './engine.js';
import { FAILING_DEACTIVATION_MS } from './schedule.js';
import type { WebhookStore } from './store.js';

/** How long finished deliveries and their attempts stay in the log. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600e3;

const PRUNE_BATCH = 5000;
const PRUNE_ROUNDS = 20;

/**
 * The cron jobs of webhooks. `webhooks.sweep` (every minute) deactivates webhooks whose attempts
 * have all failed for 5 days, cancelling their queued deliveries, queues again the deliveries a
 * node that died left `sending` (many nodes on PostgreSQL), and re-reads what is due from the
 * database so the engine's hints can never strand a row (nor miss one another node queued). `webhooks.prune` (hourly) drops finished
 * deliveries past the retention, in bounded batches.
 */
export function webhookJobs(deps: { db: Db; clock: Clock; logger: Logger; store: WebhookStore; deliveries: DeliveryStore; engine: DeliveryEngine }): CronJob[] {
  const { db, clock, logger, store, deliveries, engine } = deps;
  return [
    {
      name: 'webhooks.sweep',
      schedule: '0 * * * * *',
      async run() {
        const now = clock.now();
        const ids = await db.transaction().execute(async (trx) => {
          const found = await store.deactivateFailing(trx, now - FAILING_DEACTIVATION_MS, now);
          for (const id of found) await deliveries.cancelQueued(trx, id);
          return found;
        });
        if (ids.length > 0) logger.info({ webhook_ids: ids }, 'webhooks failing for 5 days were deactivated');
        await engine.recoverOrphans();
        await engine.resync();
        engine.wake();
      },
    },
    {
      name: 'webhooks.prune',
      schedule: '0 17 * * * *',
      async run() {
        const cutoff = clock.now() - DELIVERY_RETENTION_MS;
        let total = 0;
        for (let i = 0; i < PRUNE_ROUNDS; i++) {
          const n = await deliveries.pruneFinished(db, cutoff, PRUNE_BATCH);
          total += n;
          if (n < PRUNE_BATCH) break;
        }
        if (total > 0) logger.info({ pruned: total }, 'old webhook deliveries pruned');
      },
    },
  ];
}
