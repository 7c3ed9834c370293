import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * Tasks whose payload or result still holds plain mailbox passwords, until the sweep redacts them;
 * and the index that deleting a mailbox's events needs.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE password_redactions (
    task_id ${t.key} REFERENCES tasks(id) ON DELETE CASCADE
  )`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS events_mailbox ON events(mailbox_id)`.execute(db);
}
