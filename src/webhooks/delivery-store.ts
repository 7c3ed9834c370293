import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { dml } from '../db/backend.js';

/** A claimed delivery with everything one attempt needs. */
export interface ClaimedDelivery {
  id: number;
  webhook_id: number;
  event_type: string;
  email_id: number;
  mailbox_id: number;
  event_at: number;
  attempts: number;
  final_attempt: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  /** The email's spam verdict JSON (src/spam), null when never classified. */
  spam_verdict: string | null;
}

/** One attempt for the log. */
export interface NewAttempt {
  delivery_id: number;
  attempt: number;
  attempted_at: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

const CHUNK = 500;

function chunks<T>(list: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** Every query of the delivery queue and the attempt log. */
export function createDeliveryStore() {
  return {
    /**
     * Runs the engine's bookkeeping (claims, outcomes, the attempt log) in one transaction. Like
     * every commit of the server it is not fsynced on its own (see db/durability.ts): losing the
     * last moments of bookkeeping in a power cut only re-sends those deliveries, which X-Webhook-Id
     * lets receivers recognise.
     */
    bookkeeping: <T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /**
     * Ids of a webhook's due deliveries, oldest due first. On PostgreSQL the rows are locked until
     * the claiming transaction ends and rows another node is claiming are skipped (SKIP LOCKED),
     * so nodes claiming at once share the backlog instead of queueing behind one another.
     */
    dueFor: (db: Db, webhookId: number, now: number, limit: number) =>
      dml(db).claim(db.selectFrom('webhook_deliveries').select('id')
        .where('webhook_id', '=', webhookId).where('status', '=', 'queued').where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at').orderBy('id').limit(limit))
        .execute().then((r) => r.map((x) => x.id)),

    /** When a webhook's next queued delivery (due after `after`, if given) is due, or null when none is. */
    nextDueFor: (db: Db, webhookId: number, after: number | null) => {
      let q = db.selectFrom('webhook_deliveries').select((eb) => eb.fn.min('next_attempt_at').as('at'))
        .where('webhook_id', '=', webhookId).where('status', '=', 'queued');
      if (after !== null) q = q.where('next_attempt_at', '>', after);
      return q.executeTakeFirst().then((r) => (r?.at ?? null) as number | null);
    },

    /** Marks queued deliveries as being sent and returns them with their webhook's URL and secrets. */
    async claim(db: Db, ids: number[]): Promise<ClaimedDelivery[]> {
      const out: ClaimedDelivery[] = [];
      for (const part of chunks(ids)) {
        const claimed = await db.updateTable('webhook_deliveries').set({ status: 'sending' })
          .where('id', 'in', part).where('status', '=', 'queued').returning('id').execute();
        if (claimed.length === 0) continue;
        out.push(...await db.selectFrom('webhook_deliveries as d').innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
          .select(['d.id', 'd.webhook_id', 'd.event_type', 'd.email_id', 'd.mailbox_id', 'd.event_at', 'd.attempts', 'd.final_attempt',
            'w.url', 'w.secret', 'w.previous_secret', 'w.previous_secret_until',
            sql<string | null>`(SELECT verdict FROM email_spam WHERE email_id = d.email_id)`.as('spam_verdict')])
          .where('d.id', 'in', claimed.map((c) => c.id)).execute());
      }
      return out;
    },

    /**
     * Which of these deliveries still exist (their webhook may have been deleted meanwhile), each
     * with whether its webhook is still active.
     */
    async existing(db: Db, ids: number[]): Promise<Map<number, boolean>> {
      const found = new Map<number, boolean>();
      for (const part of chunks(ids)) {
        const rows = await db.selectFrom('webhook_deliveries as d').innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
          .select(['d.id', 'w.is_active']).where('d.id', 'in', part).execute();
        for (const r of rows) found.set(r.id, r.is_active === 1);
      }
      return found;
    },

    /** Marks sent deliveries delivered. */
    async markDelivered(db: Db, ids: number[], now: number): Promise<void> {
      for (const part of chunks(ids)) {
        await db.updateTable('webhook_deliveries')
          .set((eb) => ({ status: 'delivered', attempts: eb('attempts', '+', 1), next_attempt_at: null, last_attempt_at: now, delivered_at: now, final_attempt: 0 }))
          .where('id', 'in', part).where('status', '=', 'sending').execute();
      }
    },

    /** Marks sent deliveries failed for good. */
    async markFailed(db: Db, ids: number[], now: number): Promise<void> {
      for (const part of chunks(ids)) {
        await db.updateTable('webhook_deliveries')
          .set((eb) => ({ status: 'failed', attempts: eb('attempts', '+', 1), next_attempt_at: null, last_attempt_at: now, final_attempt: 0 }))
          .where('id', 'in', part).where('status', '=', 'sending').execute();
      }
    },

    /** Puts a sent delivery back in the queue for its next attempt. */
    markRetry: (db: Db, id: number, nextAt: number, now: number) =>
      db.updateTable('webhook_deliveries')
        .set((eb) => ({ status: 'queued', attempts: eb('attempts', '+', 1), next_attempt_at: nextAt, last_attempt_at: now }))
        .where('id', '=', id).where('status', '=', 'sending').execute(),

    /** Returns deliveries cut short by a shutdown to the queue; not an attempt. */
    async release(db: Db, ids: number[]): Promise<void> {
      for (const part of chunks(ids)) {
        await db.updateTable('webhook_deliveries').set({ status: 'queued' }).where('id', 'in', part).where('status', '=', 'sending').execute();
      }
    },

    /** How many local errors (a row that could not be sent, outcomes.ts) a delivery's attempt log holds. */
    localErrors: (db: Db, id: number) =>
      db.selectFrom('webhook_attempts').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('delivery_id', '=', id).where('error', 'like', 'local error: %')
        .executeTakeFirstOrThrow().then((r) => Number(r.n)),

    /** Deliveries set aside (failed after local errors), for the metrics. */
    countSetAside: (db: Db) =>
      db.selectFrom('webhook_deliveries as d').select((eb) => eb.fn.countAll<number>().as('n')).where('d.status', '=', 'failed')
        .where((eb) => eb.exists(eb.selectFrom('webhook_attempts as a').select('a.id').whereRef('a.delivery_id', '=', 'd.id').where('a.error', 'like', 'set aside: %')))
        .executeTakeFirstOrThrow().then((r) => Number(r.n)),

    /**
     * Deliveries set aside, oldest first (only the one of `id` when given), with the webhook's
     * tenant and the reason and time of the attempt that set each aside.
     */
    setAside: (db: Db, o: { limit: number; id?: number }) =>
      db.selectFrom('webhook_deliveries as d').innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
        .select(['d.id', 'd.webhook_id', 'w.tenant_id', 'd.event_type', 'd.email_id', 'd.mailbox_id', 'd.attempts', 'd.created_at'])
        .select((eb) => [
          eb.selectFrom('webhook_attempts as a').select('a.error').whereRef('a.delivery_id', '=', 'd.id').where('a.error', 'like', 'set aside: %')
            .orderBy('a.id', 'desc').limit(1).as('reason'),
          eb.selectFrom('webhook_attempts as a').select('a.attempted_at').whereRef('a.delivery_id', '=', 'd.id').where('a.error', 'like', 'set aside: %')
            .orderBy('a.id', 'desc').limit(1).as('set_aside_at'),
        ])
        .where('d.status', '=', 'failed')
        .where((eb) => eb.exists(eb.selectFrom('webhook_attempts as a').select('a.id').whereRef('a.delivery_id', '=', 'd.id').where('a.error', 'like', 'set aside: %')))
        .$if(o.id !== undefined, (q) => q.where('d.id', '=', o.id!))
        .orderBy('d.id').limit(o.limit).execute(),

    /** Deletes one delivery with its attempt log (the log's rows cascade). */
    remove: (db: Db, id: number) => db.deleteFrom('webhook_deliveries').where('id', '=', id).execute(),

    /** Appends attempts to the log. */
    async insertAttempts(db: Db, rows: NewAttempt[]): Promise<void> {
      for (const part of chunks(rows, 300)) await db.insertInto('webhook_attempts').values(part).execute();
    },

    /** Fails every queued delivery of a webhook (it was deactivated); returns how many. */
    cancelQueued: (db: Db, webhookId: number) =>
      db.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null })
        .where('webhook_id', '=', webhookId).where('status', '=', 'queued')
        .executeTakeFirst().then((r) => Number(r.numUpdatedRows)),

    /** Deliveries a crash left `sending` go back to the queue (the receiver may see one twice: X-Webhook-Id tells). */
    recoverSending: (db: Db) =>
      db.updateTable('webhook_deliveries').set({ status: 'queued' }).where('status', '=', 'sending')
        .executeTakeFirst().then((r) => Number(r.numUpdatedRows)),

    /** One delivery of a webhook. */
    byId: (db: Db, webhookId: number, id: number) =>
      db.selectFrom('webhook_deliveries').select(['id', 'status']).where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst(),

    /** Queues a delivery again now; `final` makes it a single attempt (a replay of a finished one). */
    requeue: (db: Db, id: number, now: number, final: boolean) =>
      db.updateTable('webhook_deliveries').set({ status: 'queued', next_attempt_at: now, final_attempt: final ? 1 : 0 })
        .where('id', '=', id).where('status', '!=', 'sending').execute(),

    /** A page of a webhook's deliveries, newest first. */
    page: (db: Db, webhookId: number, o: { before: number | null; limit: number; status: string | null }) => {
      let q = db.selectFrom('webhook_deliveries')
        .select(['id', 'event_type', 'email_id', 'mailbox_id', 'status', 'attempts', 'next_attempt_at', 'last_attempt_at', 'delivered_at', 'created_at'])
        .where('webhook_id', '=', webhookId);
      if (o.before !== null) q = q.where('id', '<', o.before);
      if (o.status !== null) q = q.where('status', '=', o.status as 'queued');
      return q.orderBy('id', 'desc').limit(o.limit).execute();
    },

    /** The attempts of these deliveries, newest first. */
    attemptsOf: (db: Db, deliveryIds: number[]) =>
      deliveryIds.length === 0 ? Promise.resolve([])
        : db.selectFrom('webhook_attempts').select(['delivery_id', 'attempt', 'attempted_at', 'status_code', 'latency_ms', 'error'])
          .where('delivery_id', 'in', deliveryIds).orderBy('id', 'desc').execute(),

    /** Deletes up to `limit` finished deliveries created before `cutoff` (oldest first); returns how many. */
    pruneFinished: (db: Db, cutoff: number, limit: number) =>
      db.deleteFrom('webhook_deliveries').where('id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id')
        .where('created_at', '<', cutoff).where('status', 'in', ['delivered', 'failed']).orderBy('id').limit(limit))
        .executeTakeFirst().then((r) => Number(r.numDeletedRows)),
  };
}
export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
