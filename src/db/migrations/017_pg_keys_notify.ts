import { sql, type Kysely } from 'kysely';
import { backendOf } from '../backend.js';

/**
 * API keys and the tenant flags they carry announced like the directory (migration 014), on the
 * same channel and through the same function: on PostgreSQL each node keeps the key rows it
 * authenticated with while that count stands still (tenants/service.ts `authenticate`), so a
 * commit that issues or revokes a key, or turns a tenant's plan or admin flag, from any node or
 * the CLI, must move every node's count. Statement triggers: one NOTIFY per statement, folded per
 * transaction and sent at commit. Nothing on SQLite, where every request reads the key row.
 */
const TRIGGERS: Array<{ table: string; update: string }> = [
  { table: 'api_keys', update: 'UPDATE' },
  { table: 'tenants', update: 'UPDATE OF plan_active, is_admin' },
];

export async function up(db: Kysely<any>): Promise<void> {
  if (backendOf(db).kind !== 'postgres') return;
  for (const { table, update } of TRIGGERS) {
    await sql`CREATE TRIGGER ${sql.raw(`${table}_keys_changed`)}
      AFTER INSERT OR DELETE OR ${sql.raw(update)} ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION mailstead_directory_changed()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (backendOf(db).kind !== 'postgres') return;
  for (const { table } of TRIGGERS) await sql`DROP TRIGGER ${sql.raw(`${table}_keys_changed`)} ON ${sql.table(table)}`.execute(db);
}
