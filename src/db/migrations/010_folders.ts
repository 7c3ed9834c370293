import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/** The folders every mailbox has, with their IMAP SPECIAL-USE attribute (DECISIONS.md section 14). */
export const DEFAULT_FOLDERS: ReadonlyArray<readonly [name: string, specialUse: string | null]> = [
  ['INBOX', null], ['Sent', '\\Sent'], ['Drafts', '\\Drafts'], ['Trash', '\\Trash'], ['Junk', '\\Junk'],
];

/**
 * Folders and IMAP state: a folders table per mailbox (UIDVALIDITY is the folder's never-reused id,
 * so a folder deleted and made again under the same name gets a new one; uidnext rises per folder);
 * on each email its folder name, its UID in that folder and its flags other than \Seen (which is
 * read_at). Mail stored over IMAP (APPEND, COPY) may repeat a message_id in its mailbox, so the
 * uniqueness that dedupes delivery covers delivered rows only. API mail rendered for IMAP or /raw is
 * kept in email_raw so its bytes never change. login_failures counts failed logins per IP for the
 * lock-out shared by IMAP and submission.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE folders (
    id ${t.serial},
    mailbox_id ${t.int} NOT NULL,
    name TEXT NOT NULL,
    special_use TEXT,
    subscribed ${t.int} NOT NULL DEFAULT 1,
    uidnext ${t.int} NOT NULL DEFAULT 1,
    created_at ${t.int} NOT NULL,
    UNIQUE (mailbox_id, name)
  )`.execute(db);
  await sql`ALTER TABLE emails ADD COLUMN folder TEXT NOT NULL DEFAULT 'INBOX'`.execute(db);
  await sql`ALTER TABLE emails ADD COLUMN uid ${t.int} NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE emails ADD COLUMN flags TEXT NOT NULL DEFAULT ''`.execute(db);
  await sql`ALTER TABLE emails ADD COLUMN imported ${t.int} NOT NULL DEFAULT 0`.execute(db);
  await sql`DROP INDEX emails_message`.execute(db);
  await sql`CREATE UNIQUE INDEX emails_message ON emails(mailbox_id, message_id) WHERE imported = 0`.execute(db);
  await sql`CREATE INDEX emails_folder_uid ON emails(mailbox_id, folder, uid)`.execute(db);
  await sql`CREATE TABLE email_raw (
    email_id ${t.key} REFERENCES emails(id) ON DELETE CASCADE,
    raw ${t.blob} NOT NULL
  )`.execute(db);
  await sql`CREATE TABLE login_failures (
    id ${t.id},
    ip TEXT NOT NULL,
    at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX login_failures_ip ON login_failures(ip, at)`.execute(db);

  // Existing mail is in INBOX, numbered in arrival order.
  await sql`UPDATE emails SET uid = r.n FROM (SELECT id, row_number() OVER (PARTITION BY mailbox_id ORDER BY id) AS n FROM emails) AS r
    WHERE emails.id = r.id`.execute(db);
  const now = Date.now();
  for (const [name, specialUse] of DEFAULT_FOLDERS) {
    await sql`INSERT INTO folders (mailbox_id, name, special_use, uidnext, created_at)
      SELECT m.id, ${name}, ${specialUse}, 1 + coalesce((SELECT max(uid) FROM emails WHERE mailbox_id = m.id AND folder = ${name}), 0), ${now}
      FROM mailboxes AS m ORDER BY m.id`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE login_failures`.execute(db);
  await sql`DROP TABLE email_raw`.execute(db);
  await sql`DROP INDEX emails_folder_uid`.execute(db);
  await sql`DROP INDEX emails_message`.execute(db);
  await sql`CREATE UNIQUE INDEX emails_message ON emails(mailbox_id, message_id)`.execute(db);
  for (const c of ['imported', 'flags', 'uid', 'folder']) await sql`ALTER TABLE emails DROP COLUMN ${sql.raw(c)}`.execute(db);
  await sql`DROP TABLE folders`.execute(db);
}
