import { sql, type Kysely } from 'kysely';
import { backendOf } from '../backend.js';

/**
 * The large columns written once per message, compressed with lz4 instead of PostgreSQL's default
 * pglz where the server was built with lz4 (PostgreSQL 14+, `default_toast_compression`'s choices
 * say): a ~5 KB message's raw bytes cost its commit about half the database CPU (measured
 * 23 against 47 µs a row for the benchmark's text, 45 against 77 for less repetitive text, at
 * about the same size), and they are compressed in the acknowledgement's own commit. Only rows
 * written from now on change; older ones stay pglz and read as before. SQLite: nothing to do.
 */
const COLUMNS: Array<[table: string, column: string]> = [
  ['inbound', 'raw'],
  ['inbound', 'message'],
  ['email_contents', 'headers'],
  ['email_contents', 'body_text'],
  ['email_contents', 'body_html'],
];

async function lz4Available(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`SELECT coalesce(bool_or('lz4' = ANY(enumvals)), false) AS ok
    FROM pg_settings WHERE name = 'default_toast_compression'`.execute(db);
  return rows[0]?.ok === true;
}

export async function up(db: Kysely<any>): Promise<void> {
  if (backendOf(db).kind !== 'postgres' || !(await lz4Available(db))) return;
  for (const [table, column] of COLUMNS) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN ${sql.ref(column)} SET COMPRESSION lz4`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (backendOf(db).kind !== 'postgres') return;
  for (const [table, column] of COLUMNS) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN ${sql.ref(column)} SET COMPRESSION default`.execute(db);
  }
}
