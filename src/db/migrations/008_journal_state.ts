import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * How far the inbound queue holds the acceptance journal (src/ingest/journal.ts): the records
 * before (segment, position) are queue rows. Moved in the same transaction as the rows, so a
 * restart replays exactly the records not yet moved.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE journal_state (
    id ${t.key} CHECK (id = 1),
    segment ${t.int} NOT NULL,
    position ${t.int} NOT NULL
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE journal_state`.execute(db);
}
