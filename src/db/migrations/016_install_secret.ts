import { sql, type Kysely } from 'kysely';
import { backendOf } from '../backend.js';

/**
 * The install secret on PostgreSQL (src/install-secret.ts): one row, shared by every node. On
 * SQLite it stays the data directory's `install.secret` file, so this migration does nothing there.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (backendOf(db).kind !== 'postgres') return;
  await sql`CREATE TABLE install_secret (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    secret TEXT NOT NULL CHECK (secret ~ '^[0-9a-f]{64}$')
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (backendOf(db).kind !== 'postgres') return;
  await sql`DROP TABLE install_secret`.execute(db);
}
