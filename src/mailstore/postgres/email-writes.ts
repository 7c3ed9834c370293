import { sql, type Insertable } from 'kysely';
import type { Db } from '../../db/connection.js';
import { foldSearchText } from '../../message/search-fold.js';
import type { EmailWrites, NewEmailRow } from '../ports.js';
import type { AttachmentsTable, EmailContentsTable, EmailImapTable, EmailsFtsTable } from '../../db/tables/emails.js';

/*
 * The writing queries of stored email on PostgreSQL (DECISIONS.md section 17), the port of
 * ports.ts whose SQLite form (sqlite/email-writes.ts) does not run there: placeholders (`?`),
 * sqlite_sequence, json_each, scalar max() and the FTS5 table. Lists travel as one array parameter each.
 */

/** The sequence of emails.id (an identity column on PostgreSQL). */
const EMAIL_SEQUENCE = sql`pg_get_serial_sequence('emails', 'id')`;

export const postgresEmailWrites: EmailWrites = {
  /**
   * The first id of the next emails: above every stored id and every id the identity sequence
   * handed out. Writers of emails hold the update-marker row lock (markers.ts), so no two run this
   * between the read and their insert.
   */
  nextEmailId: (db: Db) =>
    sql<{ n: number }>`SELECT greatest((SELECT coalesce(max(id), 0) FROM emails),
      (SELECT coalesce(last_value, 0) FROM pg_sequences WHERE schemaname || '.' || sequencename = ${EMAIL_SEQUENCE})) + 1 AS n`
      .execute(db).then((r) => Number(r.rows[0].n)),

  /** Inserts emails with their ids, skipping a delivered message_id its mailbox already has; returns the ids stored. */
  async insertEmails(db: Db, rows: NewEmailRow[]): Promise<Set<number>> {
    const stored = new Set<number>();
    if (rows.length === 0) return stored;
    const r = await db.insertInto('emails').values(rows)
      .onConflict((oc) => oc.columns(['mailbox_id', 'message_id']).where('imported', '=', 0).doNothing())
      .returning('id').execute();
    for (const x of r) stored.add(Number(x.id));
    // Ids are given, not drawn: keep the sequence above them for any insert that draws one.
    await sql`SELECT setval(${EMAIL_SEQUENCE}, ${Math.max(...rows.map((x) => x.id))}::bigint)
      WHERE ${Math.max(...rows.map((x) => x.id))}::bigint > (SELECT coalesce(last_value, 0) FROM pg_sequences WHERE schemaname || '.' || sequencename = ${EMAIL_SEQUENCE})`.execute(db);
    return stored;
  },

  insertContents: (db: Db, rows: Insertable<EmailContentsTable>[]) =>
    (rows.length === 0 ? Promise.resolve() : db.insertInto('email_contents').values(rows).execute().then(() => undefined)),

  insertAttachments: (db: Db, rows: Insertable<AttachmentsTable>[]) =>
    (rows.length === 0 ? Promise.resolve() : db.insertInto('attachments').values(rows).execute().then(() => undefined)),

  saveImap: (db: Db, rows: EmailImapTable[]) =>
    (rows.length === 0 ? Promise.resolve() : db.insertInto('email_imap').values(rows)
      .onConflict((oc) => oc.column('email_id').doUpdateSet((eb) => ({
        size: eb.ref('excluded.size'), envelope: eb.ref('excluded.envelope'), bodystructure: eb.ref('excluded.bodystructure'),
      }))).execute().then(() => undefined)),

  /**
   * Search documents (search.ts): one tsvector per email of the four fields FTS5 indexes on
   * SQLite, each folded as queries are and weighted by field (subject A, body B, sender address
   * C, sender name D) so that IMAP's SEARCH BODY can keep to the body; one statement for the batch.
   * Each carries its email's received_at (migration 018), read from the email row stored before it.
   */
  async indexFts(db: Db, rows: EmailsFtsTable[]): Promise<void> {
    if (rows.length === 0) return;
    const col = (f: (r: EmailsFtsTable) => string) => rows.map((r) => foldSearchText(f(r)));
    await sql`INSERT INTO emails_fts (email_id, received_at, document)
      SELECT t.id, e.received_at, setweight(to_tsvector('simple', t.subject), 'A') || setweight(to_tsvector('simple', t.body), 'B')
        || setweight(to_tsvector('simple', t.from_email), 'C') || setweight(to_tsvector('simple', t.from_name), 'D')
      FROM unnest(${rows.map((r) => r.rowid)}::bigint[], ${col((r) => r.subject)}::text[], ${col((r) => r.body)}::text[],
        ${col((r) => r.from_email)}::text[], ${col((r) => r.from_name)}::text[]) AS t(id, subject, body, from_email, from_name)
        JOIN emails e ON e.id = t.id
      ON CONFLICT (email_id) DO UPDATE SET document = excluded.document`.execute(db);
  },

  releaseBytes: (db: Db, mailboxId: number, size: number) =>
    db.updateTable('mailboxes').set({ used_bytes: sql`greatest(0, used_bytes - ${size}::bigint)` }).where('id', '=', mailboxId).execute(),

  async tombstone(db: Db, ids: number[], now: number, nextMarker: () => number) {
    if (ids.length === 0) return;
    await sql`DELETE FROM emails_fts WHERE email_id = ANY(${ids}::bigint[])`.execute(db);
    await sql`DELETE FROM attachments WHERE email_id = ANY(${ids}::bigint[])`.execute(db);
    await sql`DELETE FROM email_contents WHERE email_id = ANY(${ids}::bigint[])`.execute(db);
    await sql`DELETE FROM email_imap WHERE email_id = ANY(${ids}::bigint[])`.execute(db);
    const live = await sql<{ id: number }>`SELECT id FROM emails WHERE id = ANY(${ids}::bigint[]) AND deleted_at IS NULL ORDER BY id`.execute(db);
    if (live.rows.length === 0) return;
    const liveIds = live.rows.map((r) => Number(r.id));
    const markers = liveIds.map(() => nextMarker());
    await sql`UPDATE emails SET deleted_at = ${now}::bigint, updated_seq = m.marker
      FROM unnest(${liveIds}::bigint[], ${markers}::bigint[]) AS m(id, marker) WHERE emails.id = m.id`.execute(db);
  },
};
