import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../db/connection.js';
import { listOf } from '../db/json-list.js';
import { storableText } from '../db/storable-text.js';
import type { OutboundStatus, OutboundTable } from '../db/tables/outbound.js';

/** The longest reply kept (a remote may say a lot). */
const MAX_REPLY = 1000;

/** An item as the queue keeps it. */
export type OutboundRow = Selectable<OutboundTable>;

/** A page position in the (id) order, newest first. */
export interface ListPosition {
  direction: 'next' | 'prev';
  id: number;
}

/** Every query of outbound delivery, and nothing else. */
export function createOutboundStore() {
  return {
    /** Queues items; returns their ids. */
    async insert(db: Db, rows: Insertable<OutboundTable>[]): Promise<number[]> {
      const ids: number[] = [];
      for (const r of rows) {
        const res = await db.insertInto('outbound').values(r).returning('id').executeTakeFirstOrThrow();
        ids.push(res.id);
      }
      return ids;
    },

    /** Keeps bytes of an outgoing message; returns the reference items carry. */
    putMessage: (db: Db, raw: Buffer, now: number) =>
      db.insertInto('outbound_messages').values({ raw, created_at: now }).returning('id').executeTakeFirstOrThrow().then((r) => r.id),

    /** The bytes of an outgoing message. */
    message: (db: Db, ref: number) =>
      db.selectFrom('outbound_messages').select('raw').where('id', '=', ref).executeTakeFirst().then((r) => r?.raw ?? null),

    /** Points every item of an inbound message at its rendered bytes (API mail, rendered once). */
    setMessageRef: (db: Db, inboundId: number, ref: number) =>
      db.updateTable('outbound').set({ message_ref: ref }).where('inbound_id', '=', inboundId).where('message_ref', 'is', null).execute(),

    /** Where the bytes of a forward's inbound row are (the parsed `message` is read only for API mail, see inboundMessage). */
    inboundSource: (db: Db, id: number) =>
      db.selectFrom('inbound').select(['kind', 'raw', 'raw_path']).where('id', '=', id).executeTakeFirst(),

    /** The stored form of API mail, which is rendered into bytes once. */
    inboundMessage: (db: Db, id: number) =>
      db.selectFrom('inbound').select('message').where('id', '=', id).executeTakeFirst().then((r) => r?.message ?? null),

    /** Queued items due at `now`, oldest due first, skipping those already being delivered. */
    due: (db: Db, now: number, limit: number, busy: number[]) =>
      db.selectFrom('outbound').selectAll().where('status', '=', 'queued').where('next_attempt_at', '<=', now)
        .$if(busy.length > 0, (q) => q.where('id', 'not in', listOf(db, busy)))
        .orderBy('next_attempt_at').orderBy('id').limit(limit).execute(),

    /** When the next queued item is due, or null when nothing is queued. */
    nextDue: (db: Db) =>
      db.selectFrom('outbound').select((eb) => eb.fn.min('next_attempt_at').as('at')).where('status', '=', 'queued')
        .executeTakeFirst().then((r) => (r?.at === null || r?.at === undefined ? null : Number(r.at))),

    /** Records a delivery. Replies are a remote's text: stored as the database can hold them (storable-text.ts). */
    markSent: (db: Db, ids: number[], response: string, now: number) =>
      db.updateTable('outbound').set({ status: 'sent', attempts: sql`attempts + 1`, next_attempt_at: null, last_response: storableText(response, MAX_REPLY), updated_at: now })
        .where('id', 'in', listOf(db, ids)).execute(),

    /** Records a try that will be repeated at `at`. */
    markRetry: (db: Db, id: number, response: string, at: number, now: number) =>
      db.updateTable('outbound').set({ attempts: sql`attempts + 1`, next_attempt_at: at, last_response: storableText(response, MAX_REPLY), updated_at: now })
        .where('id', '=', id).where('status', '=', 'queued').execute(),

    /** Gives up on an item; `counted` says whether a try was made (a refusal before any connection is not one). */
    markFailed: (db: Db, id: number, response: string, counted: boolean, now: number) =>
      db.updateTable('outbound').set({ status: 'failed', attempts: counted ? sql`attempts + 1` : sql`attempts`, next_attempt_at: null, last_response: storableText(response, MAX_REPLY), updated_at: now })
        .where('id', '=', id).execute(),

    /** Notes that the item's DSN was queued. */
    markDsnSent: (db: Db, id: number) => db.updateTable('outbound').set({ dsn_sent: 1 }).where('id', '=', id).execute(),

    /** One item of a tenant. */
    get: (db: Db, tenantId: number, id: number) =>
      db.selectFrom('outbound').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst(),

    /** One item by id. */
    byId: (db: Db, id: number) => db.selectFrom('outbound').selectAll().where('id', '=', id).executeTakeFirst(),

    /** Queues a queued or failed item for a try now; false for a sent one. */
    requeue: (db: Db, tenantId: number, id: number, now: number) =>
      db.updateTable('outbound').set({ status: 'queued', next_attempt_at: now, updated_at: now })
        .where('tenant_id', '=', tenantId).where('id', '=', id).where('status', '!=', 'sent').executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows) > 0),

    /**
     * A page of a tenant's items, newest first (`perPage + 1` rows, so the caller knows whether more
     * follow): below `pos.id` going down, or above it going up (then oldest first; the caller reverses).
     */
    page: (db: Db, tenantId: number, status: OutboundStatus | undefined, pos: ListPosition | null, limit: number) =>
      db.selectFrom('outbound').selectAll().where('tenant_id', '=', tenantId)
        .$if(status !== undefined, (q) => q.where('status', '=', status!))
        .$if(pos?.direction === 'next', (q) => q.where('id', '<', pos!.id))
        .$if(pos?.direction === 'prev', (q) => q.where('id', '>', pos!.id))
        .orderBy('id', pos?.direction === 'prev' ? 'asc' : 'desc').limit(limit).execute(),

    /** Whether the tenant has an item beyond `id` in a direction (for the other cursor of a page). */
    anyBeyond: (db: Db, tenantId: number, status: OutboundStatus | undefined, id: number, side: 'above' | 'below') =>
      db.selectFrom('outbound').select('id').where('tenant_id', '=', tenantId)
        .$if(status !== undefined, (q) => q.where('status', '=', status!))
        .where('id', side === 'above' ? '>' : '<', id).limit(1).executeTakeFirst().then((r) => r !== undefined),

    /** Failed items whose reply begins with `prefix` (those set aside, for the metrics). */
    countFailedWith: (db: Db, prefix: string) =>
      db.selectFrom('outbound').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'failed').where('last_response', 'like', `${prefix}%`)
        .executeTakeFirstOrThrow().then((r) => Number(r.n)),

    /** Failed items whose reply begins with `prefix` (those set aside), oldest first; only the one of `id` when given. */
    failedWith: (db: Db, prefix: string, o: { limit: number; id?: number }) =>
      db.selectFrom('outbound').select(['id', 'tenant_id', 'kind', 'mail_from', 'rcpt_to', 'attempts', 'last_response', 'inbound_id', 'message_ref', 'created_at', 'updated_at'])
        .where('status', '=', 'failed').where('last_response', 'like', `${prefix}%`)
        .$if(o.id !== undefined, (q) => q.where('id', '=', o.id!)).orderBy('id').limit(o.limit).execute(),

    /** Queues a failed item whose reply begins with `prefix` for a try now; false when there is none of that id. */
    requeueFailedWith: (db: Db, id: number, prefix: string, now: number) =>
      db.updateTable('outbound').set({ status: 'queued', next_attempt_at: now, updated_at: now })
        .where('id', '=', id).where('status', '=', 'failed').where('last_response', 'like', `${prefix}%`).executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows) > 0),

    /** Items by status, for the metrics. */
    countByStatus: (db: Db) =>
      db.selectFrom('outbound').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute(),

    /** Finished (sent or failed) items last changed before `cutoff`, oldest first. */
    finishedBefore: (db: Db, cutoff: number, limit: number) =>
      db.selectFrom('outbound').select(['id', 'inbound_id', 'message_ref']).where('status', '!=', 'queued').where('updated_at', '<', cutoff)
        .orderBy('id').limit(limit).execute(),

    /** Removes items, then the message bytes among `refs` that no item names any more. */
    async remove(db: Db, ids: number[], refs: number[]) {
      if (ids.length) await db.deleteFrom('outbound').where('id', 'in', listOf(db, ids)).execute();
      if (refs.length) {
        await db.deleteFrom('outbound_messages').where('id', 'in', listOf(db, refs))
          .where((eb) => eb.not(eb.exists(eb.selectFrom('outbound').select('id').whereRef('outbound.message_ref', '=', 'outbound_messages.id')))).execute();
      }
    },

    /** Removes message bytes no item names (their items went with a deleted tenant). */
    removeOrphanMessages: (db: Db) =>
      db.deleteFrom('outbound_messages')
        .where((eb) => eb.not(eb.exists(eb.selectFrom('outbound').select('id').whereRef('outbound.message_ref', '=', 'outbound_messages.id')))).execute(),

    /** The DKIM private key of a hosted domain, or null (none yet, or not hosted). */
    dkimKey: (db: Db, hostname: string) =>
      db.selectFrom('domains').select('dkim_private_key').where('hostname', '=', hostname).executeTakeFirst().then((r) => r?.dkim_private_key ?? null),

    /** The tenant of a hosted domain, or null. */
    hostedTenant: (db: Db, hostname: string) =>
      db.selectFrom('domains').select('tenant_id').where('hostname', '=', hostname).executeTakeFirst().then((r) => r?.tenant_id ?? null),
  };
}
export type OutboundStore = ReturnType<typeof createOutboundStore>;
