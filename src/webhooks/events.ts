import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { dialectOf } from '../db/dialect.js';
import type { NodeSession } from '../db/pg-session.js';
import type { Clock } from '../clock.js';
import { createWebhookStore, type WebhookStore } from './store.js';

/** The events webhooks deliver. */
export const EVENT_TYPES = ['email.received', 'email.read', 'email.deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One email event of a tenant. */
export interface EmailEvent {
  tenantId: number;
  type: EventType;
  emailId: number;
  mailboxId: number;
}

/** Deliveries that a record call queued, per webhook: the engine's hint that work is due. */
export type QueuedHint = { webhookId: number; at: number };

/**
 * Records email events durably. Callers record inside the transaction of the state change that
 * caused the event, so an event exists exactly when its change does; webhook fan-out hangs off
 * this same call and therefore the same transaction: one delivery row per active webhook of the
 * tenant subscribed to the event type, so no event is lost between "stored" and "announced".
 */
export function createEventRecorder({ clock, store = createWebhookStore(), onQueued }: {
  clock: Clock;
  store?: WebhookStore;
  /** Told (after the current tick, so after the caller's statement) which webhooks got work; on PostgreSQL every node is told through NOTIFY instead (see listenQueued). */
  onQueued?: (hints: QueuedHint[]) => void;
}) {
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
      if (queued.length > 0 && dialectOf(trx) === 'postgres') {
        // PostgreSQL delivers a NOTIFY at commit, to every node: each engine then claims rows it can see.
        await notifyQueued(trx, [...new Set(queued)]);
      } else if (queued.length > 0 && onQueued) {
        const hints = [...new Set(queued)].map((webhookId) => ({ webhookId, at: now }));
        // SQLite: the engine's claim waits for the connection this transaction holds, so it sees the rows once committed.
        setImmediate(() => onQueued(hints));
      }
      return ids;
    },
  };
}
export type EventRecorder = ReturnType<typeof createEventRecorder>;

/** The channel of "deliveries were queued for these webhooks" on PostgreSQL. */
const QUEUED_CHANNEL = 'mailstead_webhooks';
/** Longest payload sent (PostgreSQL takes up to 8000 bytes); a longer list is sent empty: look at every webhook. */
const MAX_PAYLOAD = 7000;

/** Inside the recording transaction: every node hears at commit which webhooks got deliveries. */
async function notifyQueued(trx: Db, webhookIds: number[]): Promise<void> {
  const payload = JSON.stringify(webhookIds);
  await sql`SELECT pg_notify(${QUEUED_CHANNEL}, ${payload.length <= MAX_PAYLOAD ? payload : ''})`.execute(trx);
}

/**
 * Hears the deliveries queued on any node (PostgreSQL): `hint` with the webhooks named, or
 * `everything` when the list was too long or notifications may have been lost (a reconnect).
 */
export function listenQueued(session: NodeSession, now: () => number, on: { hint(hints: QueuedHint[]): void; everything(): void }): Promise<void> {
  return session.listen(QUEUED_CHANNEL, (payload) => {
    let ids: unknown = null;
    try { ids = payload ? JSON.parse(payload) : null; } catch { /* not ours: look at everything */ }
    if (Array.isArray(ids) && ids.every((id) => Number.isSafeInteger(id))) on.hint(ids.map((webhookId: number) => ({ webhookId, at: now() })));
    else on.everything();
  });
}
