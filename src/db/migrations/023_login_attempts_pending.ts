import { sql, type Kysely } from 'kysely';

/**
 * A login attempt whose password check is still running is a row with `pending` = 1 (mailboxes/lockout.ts):
 * it holds a place among the ten attempts an IP may have, but it is no failure until the check says so,
 * so correct logins at once from one address are never locked out by each other.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE login_failures ADD COLUMN pending INTEGER NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE login_failures DROP COLUMN pending`.execute(db);
}
