import { sql, type Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import { jsonList } from '../db/json-list.js';
import { multiRowInsert } from '../db/multi-row.js';
import type { OutboundTable } from '../outbound/tables.js';
import { safeText } from '../ingest/safe-text.js';
import type { InboundReservationsTable, InboundTable } from '../ingest/tables.js';

/** A (mailbox, message_id) pair whose uniqueness ingest checks. */
export interface MessageKey {
  mailboxId: number;
  messageId: string;
}

/** The key of a pair in a Set. */
export const messageKey = (k: MessageKey) => `${k.mailboxId}\u0000${k.messageId}`;

type NewInboundRow = Insertable<InboundTable> & { id: number };
const insertInboundRows = multiRowInsert<NewInboundRow>('INSERT INTO inbound', [
  'id', 'kind', 'message', 'targets', 'raw', 'raw_path', 'size', 'error', 'created_at', 'done_at',
], '', { maxBytes: 1024 * 1024, bytesOf: (r) => (r.raw?.length ?? 0) + r.message.length });
const insertReservationRows = multiRowInsert<InboundReservationsTable>('INSERT INTO inbound_reservations', ['mailbox_id', 'message_id', 'inbound_id']);

/** Every query of ingestion: the inbound queue, message-id reservations, outbound forwards, mailbox quotas. */
export function createIngestStore() {
  return {
    /** Which of these pairs are already stored or queued. */
    async takenKeys(db: Db, keys: MessageKey[]): Promise<Set<string>> {
      const taken = new Set<string>();
      if (keys.length === 0) return taken;
      // One JSON parameter, so one prepared statement whatever the count (see json-list.ts).
      const pairs = JSON.stringify(keys.map((k) => [k.mailboxId, k.messageId]));
      const rows = await sql<{ mailbox_id: number; message_id: string }>`
        WITH k(mailbox_id, message_id) AS MATERIALIZED (SELECT value ->> 0, value ->> 1 FROM json_each(${pairs}))
        SELECT e.mailbox_id, e.message_id FROM k JOIN emails e ON e.mailbox_id = k.mailbox_id AND e.message_id = k.message_id AND e.imported = 0
        UNION ALL
        SELECT r.mailbox_id, r.message_id FROM k JOIN inbound_reservations r ON r.mailbox_id = k.mailbox_id AND r.message_id = k.message_id`.execute(db);
      for (const r of rows.rows) taken.add(messageKey({ mailboxId: r.mailbox_id, messageId: r.message_id }));
      return taken;
    },

    /** Quota and usage of mailboxes. */
    quotas: (db: Db, mailboxIds: number[]) =>
      mailboxIds.length === 0 ? Promise.resolve([])
        : db.selectFrom('mailboxes').select(['id', 'tenant_id', 'quota_mb', 'used_bytes']).where('id', 'in', jsonList(mailboxIds)).execute(),

    /**
     * Inserts queue rows in one statement and returns their ids, in order. Ids are assigned here
     * (after the largest one) because the caller holds the only writing connection inside its
     * transaction; a multi-row RETURNING would not promise an order.
     */
    async insertInbound(db: Db, rows: Insertable<InboundTable>[]): Promise<number[]> {
      if (rows.length === 0) return [];
      const max = await db.selectFrom('inbound').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
      const first = Number(max?.m ?? 0) + 1;
      const ids = rows.map((_, i) => first + i);
      await insertInboundRows.run(db, rows.map((r, i) => ({ ...r, id: ids[i] })));
      return ids;
    },

    /** How far the queue holds the acceptance journal; null before anything was moved. */
    journalPosition: (db: Db) =>
      db.selectFrom('journal_state').select(['segment', 'position']).where('id', '=', 1).executeTakeFirst()
        .then((r) => (r ? { segment: r.segment, offset: r.position } : null)),

    /** Records how far the queue holds the journal (in the transaction that moved the records). */
    saveJournalPosition: (db: Db, p: { segment: number; offset: number }) =>
      db.insertInto('journal_state').values({ id: 1, segment: p.segment, position: p.offset })
        .onConflict((oc) => oc.column('id').doUpdateSet({ segment: p.segment, position: p.offset })).execute(),

    reserve: (db: Db, rows: InboundReservationsTable[]) => insertReservationRows.run(db, rows).then(() => undefined),

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

    /** Rows of the inbound queue without their raw bytes (a parser thread reads those itself). */
    loadWithoutRaw: (db: Db, ids: number[]) =>
      db.selectFrom('inbound').select(['id', 'kind', 'status', 'message', 'targets', 'raw_path', 'size', 'attempts']).where('id', 'in', jsonList(ids)).orderBy('id').execute(),

    /** Full rows of the inbound queue. */
    load: (db: Db, ids: number[]) =>
      db.selectFrom('inbound').selectAll().where('id', 'in', jsonList(ids)).orderBy('id').execute(),

    /** Marks rows stored (keeping their message and raw bytes); rows nothing references any more are removed instead. */
    async finish(db: Db, done: Array<{ id: number; keep: boolean }>) {
      const keep = done.filter((d) => d.keep).map((d) => d.id);
      const drop = done.filter((d) => !d.keep).map((d) => d.id);
      const all = done.map((d) => d.id);
      if (all.length) await db.deleteFrom('inbound_reservations').where('inbound_id', 'in', jsonList(all)).execute();
      // A same-size status and no done_at: the row is overwritten in place, its raw bytes untouched (tables.ts).
      if (keep.length) await db.updateTable('inbound').set({ status: 'stored' }).where('id', 'in', jsonList(keep)).execute();
      if (drop.length) await db.deleteFrom('inbound').where('id', 'in', jsonList(drop)).execute();
    },

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

    /** Adds to (or, negative, takes from) a mailbox's stored bytes. */
    addUsedBytes: (db: Db, mailboxId: number, delta: number) =>
      db.updateTable('mailboxes').set({ used_bytes: sql`max(0, used_bytes + ${delta})` }).where('id', '=', mailboxId).execute(),

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
