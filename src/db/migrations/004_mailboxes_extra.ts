import { sql, type Kysely } from 'kysely';

/**
 * Tasks whose payload or result still holds plain mailbox passwords, until the sweep redacts them;
 * and the index that deleting a mailbox's events needs.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE password_redactions (
    task_id INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE
  )`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS events_mailbox ON events(mailbox_id)`.execute(db);
}
