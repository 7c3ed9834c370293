import { sql, type Kysely } from 'kysely';

/**
 * How far the inbound queue holds the acceptance journal (src/ingest/journal.ts): the records
 * before (segment, position) are queue rows. Moved in the same transaction as the rows, so a
 * restart replays exactly the records not yet moved.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE journal_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    segment INTEGER NOT NULL,
    position INTEGER NOT NULL
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE journal_state`.execute(db);
}
