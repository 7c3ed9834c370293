import { sql, type Kysely } from 'kysely';

/**
 * Messages set aside by ingest (status `failed`: a message that could not be parsed or stored after
 * MAX_ATTEMPTS tries, its raw bytes kept; src/mailstore/set-aside.ts) are counted at every `/metrics`
 * scrape and listed for administrators: a partial index finds them without a scan of the queue's
 * stored rows. The same statement on both databases.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX inbound_set_aside ON inbound(id) WHERE status = 'failed'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX inbound_set_aside`.execute(db);
}
