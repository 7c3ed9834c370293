import { chosenOnce, type Backend } from '../db/backend.js';
import type { Db } from '../db/connection.js';
import type { Clock } from '../clock.js';
import type { EmailEvent, QueuedHint } from './event-types.js';
import type { QueuedAnnouncer } from './ports.js';
import { createPostgresQueuedAnnouncer } from './postgres/queued-announcer.js';
import { createSqliteQueuedAnnouncer } from './sqlite/queued-announcer.js';
import { createWebhookStore, type WebhookStore } from './store.js';

export { EVENT_TYPES, type EmailEvent, type EventType, type QueuedHint } from './event-types.js';
export { listenQueued } from './postgres/queued-announcer.js';

/**
 * Records email events durably. Callers record inside the transaction of the state change that
 * caused the event, so an event exists exactly when its change does; webhook fan-out hangs off
 * this same call and therefore the same transaction: one delivery row per active webhook of the
 * tenant subscribed to the event type, so no event is lost between "stored" and "announced".
 */
export function createEventRecorder({ clock, store = createWebhookStore(), onQueued, backend }: {
  clock: Clock;
  store?: WebhookStore;
  /** The backend, which says how queued deliveries are announced (ports.ts); else that of the first transaction recorded in. */
  backend?: Backend;
  /** Told (after the current tick, so after the caller's statement) which webhooks got work; on PostgreSQL every node is told through NOTIFY instead (see listenQueued). */
  onQueued?: (hints: QueuedHint[]) => void;
}) {
  const announcer = chosenOnce<QueuedAnnouncer>({ sqlite: createSqliteQueuedAnnouncer({ onQueued }), postgres: createPostgresQueuedAnnouncer() }, backend);
  return {
    /** Passes on hints of deliveries recorded elsewhere (by the storage thread's own recorder). */
    notify(hints: QueuedHint[]): void {
      if (hints.length > 0 && onQueued) onQueued(hints);
    },
    /**
     * Records events and queues their webhook deliveries in the caller's transaction; returns the
     * ids of the events recorded. An event is recorded only for a tenant with an active webhook
     * subscribed to its type: events exist to be delivered, and a row per stored email that no one
     * would receive cost every batch an insert and a fan-out, and grew the table without end. A
     * webhook created or activated later sees what happens after it, as a delivery queued now
     * would: the check runs in the same transaction as the change.
     */
    async record(trx: Db, all: EmailEvent[]): Promise<number[]> {
      if (all.length === 0) return [];
      const events: EmailEvent[] = [];
      for (const type of new Set(all.map((e) => e.type))) {
        const ofType = all.filter((e) => e.type === type);
        const subscribed = await store.subscribedTenants(trx, [...new Set(ofType.map((e) => e.tenantId))], type);
        for (const e of ofType) if (subscribed.has(e.tenantId)) events.push(e);
      }
      if (events.length === 0) return [];
      const now = clock.now();
      const ids = await store.insertEvents(trx, events, now);
      const queued = await store.fanOut(trx, ids, now);
      if (queued.length > 0) await announcer(trx).announce(trx, [...new Set(queued)], now);
      return ids;
    },
  };
}
export type EventRecorder = ReturnType<typeof createEventRecorder>;
