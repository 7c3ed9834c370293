import { sql, type Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { OutboundTable } from '../db/tables/outbound.js';
import { safeText } from '../inbound/safe-text.js';
import type { InboundReservationsTable, InboundTable } from '../db/tables/ingest.js';
import type { MessageKey } from './message-key.js';
import { inboundSql } from './storage-sql.js';

export { messageKey, type MessageKey } from './message-key.js';

/**
 * Every query of ingestion: the inbound queue, message-id reservations, outbound forwards, mailbox
 * quotas. The statements whose SQL differs between the backends (lists as one parameter, ids of
 * new rows, scalar max) are the connection's backend's (ports.ts InboundSql); the rest is plain
 * Kysely and runs on both.
 */
export function createIngestStore() {
  return {
    /** Which of these pairs are already stored or queued. */
    takenKeys: (db: Db, keys: MessageKey[]) => inboundSql(db).takenKeys(db, keys),
    /** Quota and usage of mailboxes. */
    quotas: (db: Db, mailboxIds: number[]) => inboundSql(db).quotas(db, mailboxIds),
    /** Inserts queue rows and returns their ids, in the order of `rows`. */
    insertInbound: (db: Db, rows: Insertable<InboundTable>[]) => inboundSql(db).insertInbound(db, rows),
    /** Reserves message_ids of queued rows (the duplicate check sees them until the rows are stored). */
    reserve: (db: Db, rows: InboundReservationsTable[]) => inboundSql(db).reserve(db, rows),
    /** Rows of the inbound queue without their raw bytes (a parser thread reads those itself). */
    loadWithoutRaw: (db: Db, ids: number[]) => inboundSql(db).loadWithoutRaw(db, ids),
    /** Full rows of the inbound queue. */
    load: (db: Db, ids: number[]) => inboundSql(db).load(db, ids),
    /** Marks rows stored (keeping their message and raw bytes); rows nothing references any more are removed instead. */
    finish: (db: Db, done: Array<{ id: number; keep: boolean }>) => inboundSql(db).finish(db, done),
    /** Adds to (or, negative, takes from) a mailbox's stored bytes. */
    addUsedBytes: (db: Db, mailboxId: number, delta: number) => inboundSql(db).addUsedBytes(db, mailboxId, delta),

    /** How far the queue holds the acceptance journal; null before anything was moved. */
    journalPosition: (db: Db) =>
      db.selectFrom('journal_state').select(['segment', 'position']).where('id', '=', 1).executeTakeFirst()
        .then((r) => (r ? { segment: r.segment, offset: r.position } : null)),

    /** Records how far the queue holds the journal (in the transaction that moved the records). */
    saveJournalPosition: (db: Db, p: { segment: number; offset: number }) =>
      db.insertInto('journal_state').values({ id: 1, segment: p.segment, position: p.offset })
        .onConflict((oc) => oc.column('id').doUpdateSet({ segment: p.segment, position: p.offset })).execute(),

    /** The oldest queued rows after id `after`, without their payload. */
    queued: (db: Db, after: number, limit: number) =>
      db.selectFrom('inbound').select(['id', 'kind', 'size', 'attempts']).where('status', '=', 'queued').where('id', '>', after)
        .orderBy('id').limit(limit).execute(),

    /** How many SMTP rows wait in the queue. */
    countQueuedSmtp: (db: Db) =>
      db.selectFrom('inbound').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'queued').where('kind', '=', 'smtp')
        .executeTakeFirst().then((r) => Number(r?.n ?? 0)),

    /** How many API rows wait in the queue (the backlog limit counts them with the SMTP ones). */
    countQueuedApi: (db: Db) =>
      db.selectFrom('inbound').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'queued').where('kind', '=', 'api')
        .executeTakeFirst().then((r) => Number(r?.n ?? 0)),

    /** Sets aside a row that cannot be stored, counting its last try (set-aside.ts; its reservations go, so the message_id is free again). */
    async fail(db: Db, id: number, error: string, now: number) {
      await db.deleteFrom('inbound_reservations').where('inbound_id', '=', id).execute();
      await db.updateTable('inbound').set({ status: 'failed', error: safeText(error.slice(0, 500)), done_at: now, attempts: sql`attempts + 1` }).where('id', '=', id).execute();
    },

    /** Counts a failed attempt at a row. */
    bumpAttempts: (db: Db, id: number, error: string) =>
      db.updateTable('inbound').set({ attempts: sql`attempts + 1`, error: safeText(error.slice(0, 500)) }).where('id', '=', id).execute(),

    /** Which of these mailboxes still exist, with their tenant. */
    mailboxOwners: (db: Db, ids: number[]) =>
      ids.length === 0 ? Promise.resolve(new Map<number, number>())
        : db.selectFrom('mailboxes').select(['id', 'tenant_id']).where('id', 'in', ids).execute()
          .then((rows) => new Map(rows.map((r) => [r.id, r.tenant_id]))),

    /** Queues outbound items (forwards of a stored batch). */
    /** Points a submission's queue items (by their queued bytes) at its stored Sent copy. */
    linkSubmission: (db: Db, messageRef: number, emailId: number) =>
      db.updateTable('outbound').set({ email_id: emailId }).where('message_ref', '=', messageRef).where('kind', '=', 'submission')
        .where('email_id', 'is', null).execute().then(() => undefined),

    insertOutbound: (db: Db, rows: Insertable<OutboundTable>[]) =>
      rows.length ? db.insertInto('outbound').values(rows).execute().then(() => undefined) : Promise.resolve(),

    /** Removes what ingest holds for deleted mailboxes (reservations). */
    dropReservations: (db: Db, mailboxIds: number[]) =>
      db.deleteFrom('inbound_reservations').where('mailbox_id', 'in', mailboxIds).execute(),

    /** Which of these blob hashes an attachment names. */
    referencedBlobs: (db: Db, hashes: string[]) =>
      hashes.length === 0 ? Promise.resolve(new Set<string>())
        : db.selectFrom('attachments').select('sha256').distinct().where('sha256', 'in', hashes).execute()
          .then((rows) => new Set(rows.map((r) => r.sha256))),

    /** Messages of queued or set-aside API rows (their attachment blobs are not yet named by attachment rows). */
    queuedApiMessages: (db: Db) =>
      db.selectFrom('inbound').select('message').where('status', 'in', ['queued', 'failed']).where('kind', '=', 'api').execute()
        .then((rows) => rows.map((r) => r.message)),

    /** Raw files the queue still names. */
    rawPaths: (db: Db) =>
      db.selectFrom('inbound').select('raw_path').where('raw_path', 'is not', null).execute()
        .then((rows) => new Set(rows.map((r) => r.raw_path!))),

    /** Removes done inbound rows among these that neither an email nor an outbound item references; returns their raw files. */
    async dropUnreferenced(db: Db, ids: number[]): Promise<string[]> {
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('inbound').select(['id', 'raw_path']).where('id', 'in', ids).where('status', '!=', 'queued')
        .where((eb) => eb.not(eb.exists(eb.selectFrom('email_contents').select('email_id').whereRef('email_contents.inbound_id', '=', 'inbound.id'))))
        .where((eb) => eb.not(eb.exists(eb.selectFrom('outbound').select('id').whereRef('outbound.inbound_id', '=', 'inbound.id'))))
        .execute();
      if (rows.length) await db.deleteFrom('inbound').where('id', 'in', rows.map((r) => r.id)).execute();
      return rows.flatMap((r) => (r.raw_path ? [r.raw_path] : []));
    },
  };
}
export type IngestStore = ReturnType<typeof createIngestStore>;
