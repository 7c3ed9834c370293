import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * Vacation replies sent (RFC 5230 section 4.2): one row per mailbox, sender and handle, holding when
 * the next reply to that sender may go. In the database, so the memory survives restarts and is
 * shared by every PostgreSQL node; `until_at` is indexed for the sweep of expired rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE vacation_replies (
    mailbox_id ${t.int} NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
    sender TEXT NOT NULL,
    handle TEXT NOT NULL,
    until_at ${t.int} NOT NULL,
    PRIMARY KEY (mailbox_id, sender, handle)
  ) ${t.withoutRowid}`.execute(db);
  await sql`CREATE INDEX vacation_replies_until ON vacation_replies (until_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE vacation_replies`.execute(db);
}
