import { sql, type Kysely } from 'kysely';

/**
 * The ingest worker's scan of the queue (id, kind, size, attempts of queued rows after a cursor)
 * answered from the index alone: `size` and `attempts` sit after the raw bytes in the row, so
 * reading them from the table walked every row's overflow pages (~1.3 ms per scan of 256 rows of
 * 5 KB mail, on the thread that answers SMTP).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX inbound_queued_scan ON inbound(id, kind, size, attempts) WHERE status = 'queued'`.execute(db);
  await sql`DROP INDEX inbound_queued`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX inbound_queued ON inbound(id) WHERE status = 'queued'`.execute(db);
  await sql`DROP INDEX inbound_queued_scan`.execute(db);
}
