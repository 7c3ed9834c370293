import test from 'ava';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connection.js';
import { dialectOf } from '../../src/db/dialect.js';
import { migrations } from '../../src/db/migrations/index.js';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { freshPostgresDatabase } from '../helpers/pg.js';

const appliedMigrations = async (db: Db) =>
  (await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db)).rows.map((r) => r.name);
const tables = async (db: Db) =>
  (await sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`.execute(db)).rows.map((r) => r.table_name);

test('the numbered migrations run to the latest on a fresh PostgreSQL database, and again without change', async (t) => {
  const url = await freshPostgresDatabase(t);
  const first = await openPostgresDatabase(url);
  t.is(first.dialect, 'postgres');
  t.is(dialectOf(first.db), 'postgres');
  t.deepEqual(await appliedMigrations(first.db), Object.keys(migrations).sort());
  const before = await tables(first.db);
  for (const table of ['tenants', 'tasks', 'emails', 'emails_fts', 'webhook_deliveries', 'outbound', 'folders']) t.true(before.includes(table), table);
  await first.close();

  const second = await openPostgresDatabase(url);
  t.teardown(() => second.close());
  t.deepEqual(await tables(second.db), before);
  t.deepEqual(await appliedMigrations(second.db), Object.keys(migrations).sort());
});

test('nodes starting together on one PostgreSQL database migrate it once', async (t) => {
  const url = await freshPostgresDatabase(t);
  const nodes = await Promise.all([openPostgresDatabase(url), openPostgresDatabase(url), openPostgresDatabase(url)]);
  t.teardown(() => Promise.all(nodes.map((n) => n.close())));
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM kysely_migration`.execute(nodes[0]!.db);
  t.is(rows[0]!.n, Object.keys(migrations).length);
});

test('PostgreSQL columns hold millisecond timestamps and read back as numbers; full text has a GIN index', async (t) => {
  const database = await openPostgresDatabase(await freshPostgresDatabase(t));
  t.teardown(() => database.close());
  const { db } = database;
  const at = Date.UTC(2030, 0, 1);
  const id = await db.insertInto('tenants').values({ name: 'acme', plan_active: 1, is_admin: 0, created_at: at }).returning('id').executeTakeFirstOrThrow();
  t.is(typeof id.id, 'number');
  const row = await db.selectFrom('tenants').selectAll().where('id', '=', id.id).executeTakeFirstOrThrow();
  t.is(row.created_at, at);
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM tenants`.execute(db);
  t.is(rows[0]!.n, 1);
  const gin = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE tablename = 'emails_fts' AND indexname = 'emails_fts_document'`.execute(db);
  t.regex(gin.rows[0]!.indexdef, /USING gin \(document\)/);
});
