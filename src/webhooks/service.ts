import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { serializedTransaction } from '../db/provisioning-lock.js';
import { conflict, notFound, unprocessable } from '../errors.js';
import { iso } from '../format.js';
import type { ApiKey } from '../tenants/service.js';
import type { DeliveryStore } from './delivery-store.js';
import { EVENT_TYPES, type QueuedHint } from './events.js';
import type { HostLookup } from './resolve.js';
import { EVENT_BITS, type WebhookStore } from './store.js';
import { checkWebhookUrl } from './target.js';

/** How long a rotated-out secret keeps signing. */
export const ROTATION_OVERLAP_MS = 24 * 3600e3;

/** Webhooks one tenant may register. */
export const MAX_WEBHOOKS_PER_TENANT = 50;

/** Attempts shown per delivery in the deliveries list. */
const ATTEMPTS_SHOWN = 10;

/** A new 64-hex signing secret (256 bits from the CSPRNG). */
const newSecret = () => randomBytes(32).toString('hex');

const maskOf = (events: string[]) => events.reduce((m, e) => m | (EVENT_BITS[e] ?? 0), 0);
const eventsOf = (mask: number) => EVENT_TYPES.filter((e) => (mask & EVENT_BITS[e]) !== 0);

/** The rules of webhook registration, rotation, the delivery log and replays. No Koa, no SQL. */
export function createWebhookService(deps: {
  db: Db; store: WebhookStore; deliveries: DeliveryStore; clock: Clock;
  allowPrivate: boolean; lookup: HostLookup;
  /** Tells the engine about work that is due (replays). */
  notify: (hints: QueuedHint[]) => void;
}) {
  const { db, store, deliveries, clock } = deps;
  const checkUrl = (url: string) => checkWebhookUrl(url, { allowPrivate: deps.allowPrivate, lookup: deps.lookup });

  // Inside a transaction, pass it: the one SQLite connection is held by it until it ends.
  async function owned(trx: Db, key: ApiKey, id: number) {
    const w = await store.owned(trx, key.tenantId, id);
    if (!w) throw notFound('Webhook not found');
    return w;
  }

  return {
    /** Registers a webhook; the secret is returned here and never again. */
    async create(key: ApiKey, input: { url: string; events: string[]; is_active?: boolean }) {
      const url = await checkUrl(input.url);
      const secret = newSecret();
      const now = clock.now();
      const id = await serializedTransaction(db, async (trx) => {
        if (await store.countForTenant(trx, key.tenantId) >= MAX_WEBHOOKS_PER_TENANT) {
          throw unprocessable(`An account may register at most ${MAX_WEBHOOKS_PER_TENANT} webhooks`);
        }
        return store.insert(trx, {
          tenant_id: key.tenantId, url, event_mask: maskOf(input.events), is_active: input.is_active === false ? 0 : 1,
          secret, created_at: now, updated_at: now,
        });
      });
      return { id, secret };
    },

    /** The tenant's webhooks as SPEC.md "Webhook" shows them (never the secret). */
    async list(key: ApiKey) {
      const rows = await store.listForTenant(db, key.tenantId);
      return rows.map((w) => ({
        id: w.id, url: w.url, events: eventsOf(w.event_mask), is_active: w.is_active === 1,
        ...(w.last_triggered_at !== null ? { last_triggered_at: iso(w.last_triggered_at) } : {}),
      }));
    },

    /**
     * Changes url, events and/or is_active. Deactivating cancels the queued deliveries (they stay
     * in the log as failed and can be replayed); reactivating or a new url starts a fresh failing streak.
     */
    async update(key: ApiKey, id: number, patch: { url?: string; events?: string[]; is_active?: boolean }) {
      if (patch.url === undefined && patch.events === undefined && patch.is_active === undefined) {
        throw unprocessable('Request body needs at least one of url, events, is_active');
      }
      const url = patch.url === undefined ? undefined : await checkUrl(patch.url);
      await serializedTransaction(db, async (trx) => {
        const w = await owned(trx, key, id);
        const set: Parameters<WebhookStore['update']>[2] = { updated_at: clock.now() };
        if (url !== undefined) { set.url = url; set.failing_since = null; }
        if (patch.events !== undefined) set.event_mask = maskOf(patch.events);
        if (patch.is_active !== undefined) {
          set.is_active = patch.is_active ? 1 : 0;
          if (patch.is_active && w.is_active === 0) { set.failing_since = null; set.deactivated_reason = null; }
          if (!patch.is_active && w.is_active === 1) set.deactivated_reason = 'api';
        }
        await store.update(trx, id, set);
        if (patch.is_active === false) await deliveries.cancelQueued(trx, id);
      });
    },

    /** Deletes a webhook with its queued deliveries and log. */
    async remove(key: ApiKey, id: number) {
      await owned(db, key, id);
      await store.remove(db, id);
    },

    /** A new secret; the old one keeps signing (second signature entries) for 24 hours. */
    async rotate(key: ApiKey, id: number) {
      const secret = newSecret();
      const now = clock.now();
      const until = now + ROTATION_OVERLAP_MS;
      await serializedTransaction(db, async (trx) => {
        const w = await owned(trx, key, id);
        await store.rotate(trx, id, secret, w.secret, until, now);
      });
      return { id, secret, previous_secret_expires_at: iso(until) };
    },

    /** A page of a webhook's deliveries, newest first, each with its recent attempts. */
    async deliveries(key: ApiKey, id: number, q: { per_page?: number; cursor?: string; status?: string }) {
      await owned(db, key, id);
      const limit = q.per_page ?? 25;
      const rows = await deliveries.page(db, id, { before: q.cursor ? Number(q.cursor) : null, limit: limit + 1, status: q.status ?? null });
      const page = rows.slice(0, limit);
      const attempts = await deliveries.attemptsOf(db, page.map((d) => d.id));
      const byDelivery = new Map<number, typeof attempts>();
      for (const a of attempts) {
        const list = byDelivery.get(a.delivery_id) ?? [];
        if (list.length < ATTEMPTS_SHOWN) list.push(a);
        byDelivery.set(a.delivery_id, list);
      }
      const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
      return {
        data: page.map((d) => ({
          id: d.id, event: d.event_type, email_id: d.email_id, mailbox_id: d.mailbox_id, status: d.status, attempts: d.attempts,
          created_at: iso(d.created_at), next_attempt_at: isoOrNull(d.next_attempt_at), last_attempt_at: isoOrNull(d.last_attempt_at),
          delivered_at: isoOrNull(d.delivered_at),
          recent_attempts: (byDelivery.get(d.id) ?? []).map((a) => ({
            attempt: a.attempt, attempted_at: iso(a.attempted_at), status_code: a.status_code, latency_ms: a.latency_ms, error: a.error,
          })),
        })),
        meta: { next_cursor: rows.length > limit ? String(page[page.length - 1].id) : null, per_page: limit },
      };
    },

    /**
     * Sends a delivery again with the same X-Webhook-Id. A queued one is simply made due now; a
     * delivered or failed one gets one more attempt (no automatic retries after it).
     */
    async replay(key: ApiKey, id: number, deliveryId: number) {
      const now = clock.now();
      await serializedTransaction(db, async (trx) => {
        const w = await owned(trx, key, id);
        const d = await deliveries.byId(trx, id, deliveryId);
        if (!d) throw notFound('Delivery not found');
        if (w.is_active !== 1) throw unprocessable('Webhook is not active');
        if (d.status === 'sending') throw conflict('Delivery is being sent right now');
        await deliveries.requeue(trx, deliveryId, now, d.status !== 'queued');
      });
      deps.notify([{ webhookId: id, at: now }]);
    },
  };
}
export type WebhookService = ReturnType<typeof createWebhookService>;
