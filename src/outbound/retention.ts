import type { Clock } from '../clock.js';
import type { CronJob } from '../cron.js';
import type { Db } from '../db/connection.js';
import type { IngestStore } from '../mailstore/inbound-store.js';
import type { Logger } from '../logger.js';
import type { OutboundStore } from '../mailstore/outbound-store.js';

/** How long sent and failed items stay listed (and retryable, for failed ones). */
export const FINISHED_RETENTION_MS = 30 * 24 * 3600 * 1000;
/** Items removed per transaction, so a large backlog of old items never holds the write lock long. */
const CHUNK = 500;

/**
 * The hourly prune of the outbound queue: finished items older than 30 days go, with their own
 * message bytes, and the inbound messages only they still held (their raw files are left to
 * ingest's orphan sweep, as a transaction that removes rows must not remove files), and message
 * bytes whose items went with a deleted tenant.
 */
export function outboundPruneJob(deps: { db: Db; store: OutboundStore; ingestStore: IngestStore; clock: Clock; logger: Logger }): CronJob {
  return {
    name: 'outbound.prune',
    schedule: '41 * * * *',
    async run() {
      const cutoff = deps.clock.now() - FINISHED_RETENTION_MS;
      await deps.store.removeOrphanMessages(deps.db);
      for (let round = 0; round < 1000; round++) {
        const rows = await deps.store.finishedBefore(deps.db, cutoff, CHUNK);
        if (rows.length === 0) return;
        await deps.db.transaction().execute(async (trx) => {
          await deps.store.remove(trx, rows.map((r) => r.id), [...new Set(rows.flatMap((r) => (r.message_ref === null ? [] : [r.message_ref])))]);
          await deps.ingestStore.dropUnreferenced(trx, [...new Set(rows.flatMap((r) => (r.inbound_id === null ? [] : [r.inbound_id])))]);
        });
        deps.logger.debug({ removed: rows.length }, 'pruned finished outbound items');
        if (rows.length < CHUNK) return;
      }
    },
  };
}
