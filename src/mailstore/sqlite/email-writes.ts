import { sql, type Insertable } from 'kysely';
import type { Db } from '../../db/connection.js';
import { multiRowInsert } from '../../db/multi-row.js';
import type { EmailWrites, NewEmailRow } from '../ports.js';
import type { AttachmentsTable, EmailContentsTable, EmailImapTable, EmailsFtsTable } from '../../db/tables/emails.js';

const insertEmailRows = multiRowInsert<NewEmailRow>('INSERT INTO emails', [
  'id', 'tenant_id', 'mailbox_id', 'message_id', 'from_email', 'from_name', 'to_email', 'subject', 'snippet',
  'received_at', 'received_max', 'size', 'has_attachments', 'read_at', 'deleted_at', 'updated_seq', 'created_at', 'uid',
], 'ON CONFLICT (mailbox_id, message_id) WHERE imported = 0 DO NOTHING');
const insertContentRows = multiRowInsert<Insertable<EmailContentsTable>>('INSERT INTO email_contents', [
  'email_id', 'inbound_id', 'cc', 'bcc', 'headers', 'auth', 'body_text', 'body_html',
]);
const insertAttachmentRows = multiRowInsert<Insertable<AttachmentsTable>>('INSERT INTO attachments', [
  'email_id', 'filename', 'content_type', 'size', 'content_id', 'disposition', 'sha256',
]);
const insertFtsRows = multiRowInsert<EmailsFtsTable>('INSERT INTO emails_fts', ['rowid', 'subject', 'body', 'from_email', 'from_name']);
// A summary written back at a first FETCH may meet one written meanwhile by another session: the same text.
const upsertImapRows = multiRowInsert<EmailImapTable>('INSERT INTO email_imap', ['email_id', 'size', 'envelope', 'bodystructure'],
  'ON CONFLICT (email_id) DO UPDATE SET size = excluded.size, envelope = excluded.envelope, bodystructure = excluded.bodystructure');

/** The writing queries of stored email on SQLite: multi-row statements, sqlite_sequence, the FTS5 table. */
export const sqliteEmailWrites: EmailWrites = {
  nextEmailId: (db: Db) =>
    sql<{ n: number }>`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'emails'), 0), coalesce((SELECT max(id) FROM emails), 0)) + 1 AS n`
      .execute(db).then((r) => Number(r.rows[0].n)),

  async insertEmails(db: Db, rows: NewEmailRow[]): Promise<Set<number>> {
    const stored = new Set<number>();
    if (rows.length === 0) return stored;
    await insertEmailRows.run(db, rows);
    // The ids are new, so a range finds exactly the rows just inserted (one statement for any count).
    const ours = new Set(rows.map((r) => r.id));
    const ids = await db.selectFrom('emails').select('id').where('id', '>=', Math.min(...ours)).where('id', '<=', Math.max(...ours)).execute();
    for (const r of ids) if (ours.has(r.id)) stored.add(r.id);
    return stored;
  },

  insertContents: (db: Db, rows: Insertable<EmailContentsTable>[]) => insertContentRows.run(db, rows).then(() => undefined),

  insertAttachments: (db: Db, rows: Insertable<AttachmentsTable>[]) => insertAttachmentRows.run(db, rows).then(() => undefined),

  saveImap: (db: Db, rows: EmailImapTable[]) => (rows.length === 0 ? Promise.resolve() : upsertImapRows.run(db, rows).then(() => undefined)),

  indexFts: (db: Db, rows: EmailsFtsTable[]) => insertFtsRows.run(db, rows).then(() => undefined),

  releaseBytes: (db: Db, mailboxId: number, size: number) =>
    db.updateTable('mailboxes').set({ used_bytes: sql`max(0, used_bytes - ${size})` }).where('id', '=', mailboxId).execute(),

  async tombstone(db: Db, ids: number[], now: number, nextMarker: () => number) {
    if (ids.length === 0) return;
    await db.deleteFrom('emails_fts').where('rowid', 'in', ids).execute();
    await db.deleteFrom('attachments').where('email_id', 'in', ids).execute();
    await db.deleteFrom('email_contents').where('email_id', 'in', ids).execute();
    await db.deleteFrom('email_imap').where('email_id', 'in', ids).execute();
    const live = await db.selectFrom('emails').select('id').where('id', 'in', ids).where('deleted_at', 'is', null).orderBy('id').execute();
    if (live.length === 0) return;
    const marked = JSON.stringify(live.map((r) => [r.id, nextMarker()]));
    await sql`UPDATE emails SET deleted_at = ${now}, updated_seq = json_extract(m.value, '$[1]')
      FROM json_each(${marked}) AS m WHERE emails.id = json_extract(m.value, '$[0]')`.execute(db);
  },
};
