import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * Submission (DECISIONS.md section 13): every accepted submission records how many recipients it
 * had, per mailbox, so the daily limit (a rolling 24 hours) is counted in the database and holds
 * across restarts and nodes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE submission_sends (
    id ${t.id},
    mailbox_id ${t.int} NOT NULL,
    recipients ${t.int} NOT NULL,
    at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX submission_sends_mailbox ON submission_sends(mailbox_id, at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE submission_sends`.execute(db);
}
