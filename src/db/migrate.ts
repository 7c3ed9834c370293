import { Migrator, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

const MIGRATION_ATTEMPTS = 8;

/**
 * Runs pending migrations, on either dialect. The server and the CLI may start on a new database
 * at the same moment; the migrations run in one transaction, so the loser of that race rolls back
 * whole and, on its next attempt, finds them applied. (On PostgreSQL Kysely also holds an advisory
 * lock while it migrates, so many nodes starting together wait for one another.)
 */
export async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  for (let attempt = 1; ; attempt++) {
    const { error } = await migrator.migrateToLatest();
    if (!error) return;
    if (attempt >= MIGRATION_ATTEMPTS) throw error;
    await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100));
  }
}
