import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * Two IMAP fixes. A login attempt whose password check is still running is a row with `pending` = 1 (mailboxes/lockout.ts):
 * it holds a place among the ten attempts an IP may have, but it is no failure until the check says so,
 * so correct logins at once from one address are never locked out by each other. And IMAP
 * subscriptions of names that are no folder (a subscribed folder deleted: RFC 9051 6.3.7 keeps the
 * subscription, LIST shows it \NonExistent); a folder's own subscription stays its `subscribed` column.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`ALTER TABLE login_failures ADD COLUMN pending INTEGER NOT NULL DEFAULT 0`.execute(db);
  await sql`CREATE TABLE imap_subscriptions (
    mailbox_id ${t.int} NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    PRIMARY KEY (mailbox_id, name)
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE imap_subscriptions`.execute(db);
  await sql`ALTER TABLE login_failures DROP COLUMN pending`.execute(db);
}
