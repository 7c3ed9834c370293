import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * A version per spam model (`spam_totals.version`), raised by every training that changes the
 * model: a thread that keeps token counts in memory between batches (spam/token-cache.ts) reads the
 * totals anyway and knows by the version whether what it keeps is still the model's. The totals
 * alone cannot tell: a message retrained one way and another the other way leave them as they were.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`ALTER TABLE spam_totals ADD COLUMN version ${t.int} NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE spam_totals DROP COLUMN version`.execute(db);
}
