import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { dml } from '../db/backend.js';
import type { EmailEvent } from './event-types.js';

/** Bit of each event type in webhooks.event_mask. */
export const EVENT_BITS: Record<string, number> = { 'email.received': 1, 'email.read': 2, 'email.deleted': 4 };

/** Rows per multi-row INSERT (well under SQLite's bound-variable limit). */
const CHUNK = 500;

/** The bit of an event-type column, in SQL. */
const typeBit = sql<number>`(CASE e.type WHEN 'email.received' THEN 1 WHEN 'email.read' THEN 2 WHEN 'email.deleted' THEN 4 ELSE 0 END)`;

/** A webhook row as the service needs it. */
export interface NewWebhook {
  tenant_id: number;
  url: string;
  event_mask: number;
  is_active: number;
  secret: string;
  created_at: number;
  updated_at: number;
}

/** Every query about webhooks themselves and the fan-out of events into deliveries. */
export function createWebhookStore() {
  return {
    /** Tenants among these with an active webhook subscribed to the event type. */
    async subscribedTenants(db: Db, tenantIds: number[], type: string): Promise<Set<number>> {
      const rows = await db.selectFrom('webhooks').select('tenant_id').distinct()
        .where('tenant_id', 'in', tenantIds).where('is_active', '=', 1)
        .where(sql<boolean>`(event_mask & ${EVENT_BITS[type] ?? 0}) != 0`).execute();
      return new Set(rows.map((r) => r.tenant_id));
    },

    /** Inserts events; returns their ids in order. */
    async insertEvents(db: Db, events: EmailEvent[], now: number): Promise<number[]> {
      const ids: number[] = [];
      for (let i = 0; i < events.length; i += CHUNK) {
        const rows = await db.insertInto('events')
          .values(events.slice(i, i + CHUNK).map((e) => ({ tenant_id: e.tenantId, type: e.type, email_id: e.emailId, mailbox_id: e.mailboxId, created_at: now })))
          .returning('id').execute();
        ids.push(...rows.map((r) => r.id));
      }
      return ids;
    },

    /** One queued delivery per (event, active subscribed webhook of its tenant); returns their webhook ids. */
    async fanOut(db: Db, eventIds: number[], now: number): Promise<number[]> {
      const webhookIds: number[] = [];
      for (let i = 0; i < eventIds.length; i += CHUNK) {
        const rows = await db.insertInto('webhook_deliveries')
          .columns(['webhook_id', 'event_id', 'event_type', 'email_id', 'mailbox_id', 'event_at', 'status', 'next_attempt_at', 'created_at'])
          .expression((eb) => eb.selectFrom('events as e')
            .innerJoin('webhooks as w', (j) => j.onRef('w.tenant_id', '=', 'e.tenant_id'))
            .where('e.id', 'in', eventIds.slice(i, i + CHUNK))
            .where('w.is_active', '=', 1)
            .where(sql<boolean>`(w.event_mask & ${typeBit}) != 0`)
            .select(['w.id', 'e.id', 'e.type', 'e.email_id', 'e.mailbox_id', 'e.created_at', sql.lit('queued').as('status'), sql.val(now).as('next'), sql.val(now).as('created')]))
          .returning('webhook_id').execute();
        webhookIds.push(...rows.map((r) => r.webhook_id));
      }
      return webhookIds;
    },

    insert: (db: Db, w: NewWebhook) =>
      db.insertInto('webhooks').values(w).returning('id').executeTakeFirstOrThrow().then((r) => r.id),

    countForTenant: (db: Db, tenantId: number) =>
      db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow().then((r) => Number(r.n)),

    listForTenant: (db: Db, tenantId: number) =>
      db.selectFrom('webhooks').select(['id', 'url', 'event_mask', 'is_active', 'last_triggered_at'])
        .where('tenant_id', '=', tenantId).orderBy('id').execute(),

    /** The tenant's webhook, or undefined (another tenant's id is as unknown as a missing one). */
    owned: (db: Db, tenantId: number, id: number) =>
      db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst(),

    update: (db: Db, id: number, set: Partial<{ url: string; event_mask: number; is_active: number; failing_since: number | null; deactivated_reason: string | null; updated_at: number }>) =>
      db.updateTable('webhooks').set(set).where('id', '=', id).execute(),

    rotate: (db: Db, id: number, secret: string, previous: string, until: number, now: number) =>
      db.updateTable('webhooks').set({ secret, previous_secret: previous, previous_secret_until: until, updated_at: now }).where('id', '=', id).execute(),

    /** Deletes a webhook; its deliveries and their attempts go with it (ON DELETE CASCADE). */
    remove: (db: Db, id: number) => db.deleteFrom('webhooks').where('id', '=', id).execute(),

    /** Deactivates webhooks whose attempts have all failed since before `cutoff`; returns their ids. */
    deactivateFailing: (db: Db, cutoff: number, now: number) =>
      db.updateTable('webhooks')
        .set({ is_active: 0, deactivated_reason: 'failing', updated_at: now })
        .where('is_active', '=', 1).where('failing_since', 'is not', null).where('failing_since', '<=', cutoff)
        .returning('id').execute().then((rows) => rows.map((r) => r.id)),

    /** Deactivates one webhook (410 Gone). */
    deactivate: (db: Db, id: number, reason: string, now: number) =>
      db.updateTable('webhooks').set({ is_active: 0, deactivated_reason: reason, updated_at: now }).where('id', '=', id).where('is_active', '=', 1).execute(),

    /** Stamps the outcome of attempts on a webhook: last fired, and the start of a failing streak. */
    markTriggered: (db: Db, id: number, at: number, failingSince: { set: number | null } | { keepOr: number } | null) => {
      let q = db.updateTable('webhooks').set((eb) => ({ last_triggered_at: dml(db).greatest(sql`COALESCE(${eb.ref('last_triggered_at')}, 0)`, at) }));
      if (failingSince && 'set' in failingSince) q = q.set({ failing_since: failingSince.set });
      else if (failingSince) q = q.set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', sql.val(failingSince.keepOr)) }));
      return q.where('id', '=', id).execute();
    },

    /** Active webhooks' ids (the engine rebuilds its due hints from them). */
    activeIds: (db: Db) => db.selectFrom('webhooks').select('id').where('is_active', '=', 1).execute().then((r) => r.map((x) => x.id)),
  };
}
export type WebhookStore = ReturnType<typeof createWebhookStore>;
