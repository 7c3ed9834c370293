import { sql, type Insertable } from 'kysely';
import { jsonList } from '../../db/json-list.js';
import { multiRowInsert } from '../../db/multi-row.js';
import type { InboundReservationsTable, InboundTable } from '../../db/tables/ingest.js';
import { messageKey } from '../message-key.js';
import type { InboundSql } from '../ports.js';

type NewInboundRow = Insertable<InboundTable> & { id: number };
const insertInboundRows = multiRowInsert<NewInboundRow>('INSERT INTO inbound', [
  'id', 'kind', 'message', 'targets', 'raw', 'raw_path', 'size', 'error', 'created_at', 'done_at',
], '', { maxBytes: 1024 * 1024, bytesOf: (r) => (r.raw?.length ?? 0) + r.message.length });
const insertReservationRows = multiRowInsert<InboundReservationsTable>('INSERT INTO inbound_reservations', ['mailbox_id', 'message_id', 'inbound_id']);

/** The inbound queue's statements on SQLite: lists as one JSON parameter (json-list.ts), ids taken by the only writer. */
export const sqliteInboundSql: InboundSql = {
  /** Which of these pairs are already stored or queued. */
  async takenKeys(db, keys) {
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
  quotas: (db, mailboxIds) =>
    mailboxIds.length === 0 ? Promise.resolve([])
      : db.selectFrom('mailboxes').select(['id', 'tenant_id', 'quota_mb', 'used_bytes']).where('id', 'in', jsonList(mailboxIds)).execute(),

  /**
   * Inserts queue rows in one statement and returns their ids, in order. Ids are assigned here
   * (after the largest one) because the caller holds the only writing connection inside its
   * transaction; a multi-row RETURNING would not promise an order.
   */
  async insertInbound(db, rows) {
    if (rows.length === 0) return [];
    const max = await db.selectFrom('inbound').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
    const first = Number(max?.m ?? 0) + 1;
    const ids = rows.map((_, i) => first + i);
    await insertInboundRows.run(db, rows.map((r, i) => ({ ...r, id: ids[i] })));
    return ids;
  },

  reserve: (db, rows) => insertReservationRows.run(db, rows).then(() => undefined),

  /** Rows of the inbound queue without their raw bytes (a parser thread reads those itself). */
  loadWithoutRaw: (db, ids) =>
    db.selectFrom('inbound').select(['id', 'kind', 'status', 'message', 'targets', 'raw_path', 'size', 'attempts']).where('id', 'in', jsonList(ids)).orderBy('id').execute(),

  /** Full rows of the inbound queue. */
  load: (db, ids) =>
    db.selectFrom('inbound').selectAll().where('id', 'in', jsonList(ids)).orderBy('id').execute(),

  /** Marks rows stored (keeping their message and raw bytes); rows nothing references any more are removed instead. */
  async finish(db, done) {
    const keep = done.filter((d) => d.keep).map((d) => d.id);
    const drop = done.filter((d) => !d.keep).map((d) => d.id);
    const all = done.map((d) => d.id);
    if (all.length) await db.deleteFrom('inbound_reservations').where('inbound_id', 'in', jsonList(all)).execute();
    // A same-size status and no done_at: the row is overwritten in place, its raw bytes untouched (db/tables/ingest.ts).
    if (keep.length) await db.updateTable('inbound').set({ status: 'stored' }).where('id', 'in', jsonList(keep)).execute();
    if (drop.length) await db.deleteFrom('inbound').where('id', 'in', jsonList(drop)).execute();
  },

  /** Adds to (or, negative, takes from) a mailbox's stored bytes. */
  addUsedBytes: (db, mailboxId, delta) =>
    db.updateTable('mailboxes').set({ used_bytes: sql`max(0, used_bytes + ${delta})` }).where('id', '=', mailboxId).execute(),
};
