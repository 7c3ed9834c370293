import { sql, type Insertable } from 'kysely';
import type { InboundTable } from '../../db/tables/ingest.js';
import { messageKey } from '../message-key.js';
import type { InboundSql } from '../ports.js';

/**
 * The inbound queue's statements on PostgreSQL (DECISIONS.md section 17): lists travel as one
 * array parameter each, and ids of new rows are drawn from the identity's sequence (several nodes
 * insert at once).
 */
export const postgresInboundSql: InboundSql = {
  async takenKeys(db, keys) {
    const taken = new Set<string>();
    if (keys.length === 0) return taken;
    const rows = await sql<{ mailbox_id: number; message_id: string }>`
      WITH k(mailbox_id, message_id) AS (SELECT * FROM unnest(${keys.map((k) => k.mailboxId)}::bigint[], ${keys.map((k) => k.messageId)}::text[]))
      SELECT e.mailbox_id, e.message_id FROM k JOIN emails e ON e.mailbox_id = k.mailbox_id AND e.message_id = k.message_id AND e.imported = 0
      UNION ALL
      SELECT r.mailbox_id, r.message_id FROM k JOIN inbound_reservations r ON r.mailbox_id = k.mailbox_id AND r.message_id = k.message_id`.execute(db);
    for (const r of rows.rows) taken.add(messageKey({ mailboxId: Number(r.mailbox_id), messageId: r.message_id }));
    return taken;
  },

  quotas: (db, mailboxIds) =>
    mailboxIds.length === 0 ? Promise.resolve([])
      : db.selectFrom('mailboxes').select(['id', 'tenant_id', 'quota_mb', 'used_bytes']).where('id', '=', sql<number>`ANY(${mailboxIds}::bigint[])`).execute(),

  /**
   * Queue rows with ids drawn from the identity's sequence first, so the ids come back in the
   * order of `rows` (a multi-row RETURNING promises no order), whoever else inserts meanwhile.
   */
  async insertInbound(db, rows) {
    if (rows.length === 0) return [];
    const drawn = await sql<{ id: number }>`SELECT nextval(pg_get_serial_sequence('inbound', 'id')) AS id FROM generate_series(1, ${rows.length}::int)`.execute(db);
    const ids = drawn.rows.map((r) => Number(r.id)).sort((a, b) => a - b);
    // Chunks bound the bytes of one statement (raw messages ride in it).
    let start = 0;
    while (start < rows.length) {
      let end = start;
      let bytes = 0;
      while (end < rows.length && (end === start || bytes + rowBytes(rows[end]) <= 4 * 1024 * 1024) && end - start < 200) bytes += rowBytes(rows[end++]);
      await db.insertInto('inbound').values(rows.slice(start, end).map((r, i) => ({ ...r, id: ids[start + i] }))).execute();
      start = end;
    }
    return ids;
  },

  reserve: (db, rows) =>
    rows.length === 0 ? Promise.resolve(undefined)
      : sql`INSERT INTO inbound_reservations (mailbox_id, message_id, inbound_id)
          SELECT * FROM unnest(${rows.map((r) => r.mailbox_id)}::bigint[], ${rows.map((r) => r.message_id)}::text[], ${rows.map((r) => r.inbound_id)}::bigint[])`
        .execute(db).then(() => undefined),

  loadWithoutRaw: (db, ids) =>
    db.selectFrom('inbound').select(['id', 'kind', 'status', 'message', 'targets', 'raw_path', 'size', 'attempts'])
      .where('id', '=', sql<number>`ANY(${ids}::bigint[])`).orderBy('id').execute(),

  load: (db, ids) =>
    db.selectFrom('inbound').selectAll().where('id', '=', sql<number>`ANY(${ids}::bigint[])`).orderBy('id').execute(),

  async finish(db, done) {
    const keep = done.filter((d) => d.keep).map((d) => d.id);
    const drop = done.filter((d) => !d.keep).map((d) => d.id);
    const all = done.map((d) => d.id);
    if (all.length) await sql`DELETE FROM inbound_reservations WHERE inbound_id = ANY(${all}::bigint[])`.execute(db);
    if (keep.length) await sql`UPDATE inbound SET status = 'stored' WHERE id = ANY(${keep}::bigint[])`.execute(db);
    if (drop.length) await sql`DELETE FROM inbound WHERE id = ANY(${drop}::bigint[])`.execute(db);
  },

  addUsedBytes: (db, mailboxId, delta) =>
    db.updateTable('mailboxes').set({ used_bytes: sql`greatest(0, used_bytes + ${delta}::bigint)` }).where('id', '=', mailboxId).execute(),
};

const rowBytes = (r: Insertable<InboundTable>) => (r.raw?.length ?? 0) + r.message.length + r.targets.length;
