import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { backendOf, dml } from '../../src/db/backend.js';
import { openConfiguredDatabase } from '../../src/db/open.js';
import { tempDir } from '../helpers/app.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';

/** The lane's database: PostgreSQL on the PostgreSQL lane, else SQLite in a temporary data directory. */
async function openLaneDatabase(t: ExecutionContext) {
  const databaseUrl = onPostgres ? await freshPostgresDatabase(t) : null;
  const database = await openConfiguredDatabase({ dataDir: tempDir(t), databaseUrl });
  t.teardown(() => database.close());
  return database;
}

test('the backend decided at open travels with the handle and its transactions', async (t) => {
  const database = await openLaneDatabase(t);
  const kind = onPostgres ? 'postgres' : 'sqlite';
  t.is(database.backend.kind, kind);
  t.is(backendOf(database.db), database.backend);
  const inside = await database.db.transaction().execute(async (trx) => backendOf(trx));
  t.is(inside, database.backend);
  t.is(database.backend.choose({ sqlite: 'a', postgres: 'b' }), onPostgres ? 'b' : 'a');
});

test('dml fragments give the same answers on both backends', async (t) => {
  const { db } = await openLaneDatabase(t);
  const d = dml(db);
  const one = async <T>(q: ReturnType<typeof sql<T>>) => (await q.execute(db)).rows[0] as T;

  t.is((await one<{ v: number }>(sql`SELECT ${d.greatest(sql`3`, sql`7`)} AS v`)).v, 7);
  t.is((await one<{ v: string }>(sql`SELECT ${d.tail(sql`'mailstead'`, 5)} AS v`)).v, 'stead');
  t.is(Number((await one<{ v: unknown }>(sql`SELECT CASE WHEN ${d.contains(sql.lit(' \\Seen \\Deleted '), ' \\Deleted ')} THEN 1 ELSE 0 END AS v`)).v), 1);
  t.is(Number((await one<{ v: unknown }>(sql`SELECT CASE WHEN ${d.contains(sql.lit(' \\Seen '), ' \\Deleted ')} THEN 1 ELSE 0 END AS v`)).v), 0);
  t.is(Number((await one<{ v: unknown }>(sql`SELECT CASE WHEN ${d.likeAnyCase(sql.lit('Hello World'), '%WORLD%')} THEN 1 ELSE 0 END AS v`)).v), 1);
  t.is(Number((await one<{ v: unknown }>(sql`SELECT CASE WHEN ${d.jsonArrayIncludes(sql.lit('["a@x.test","b@x.test"]'), 'b@x.test')} THEN 1 ELSE 0 END AS v`)).v), 1);
  t.is(Number((await one<{ v: unknown }>(sql`SELECT CASE WHEN ${d.jsonArrayIncludes(sql.lit('["a@x.test"]'), 'b@x.test')} THEN 1 ELSE 0 END AS v`)).v), 0);

  const at = 1_900_000_000_000;
  for (const name of ['acme', 'globex', 'initech']) await db.insertInto('tenants').values({ name, plan_active: name === 'acme' ? 0 : 1, is_admin: 0, created_at: at }).execute();
  const counts = await one<{ total: number; active: number }>(sql`SELECT count(*) AS total, ${d.countWhere(sql`plan_active = 1`)} AS active FROM tenants`);
  t.deepEqual({ total: Number(counts.total), active: Number(counts.active) }, { total: 3, active: 2 });
  const named = await db.selectFrom('tenants').select('name').where('name', 'in', d.list(['globex', 'initech', 'nobody'])).orderBy('name').execute();
  t.deepEqual(named.map((r) => r.name), ['globex', 'initech']);
  const ids = await db.selectFrom('tenants').select('id').execute();
  const byId = await db.selectFrom('tenants').select('id').where('id', 'in', d.list(ids.map((r) => r.id))).execute();
  t.is(byId.length, 3);
  const claimed = await db.transaction().execute((trx) => d.claim(trx.selectFrom('tenants').select('id').where('plan_active', '=', 1)).execute());
  t.is(claimed.length, 2);
});
