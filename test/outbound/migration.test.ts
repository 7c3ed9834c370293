import test from 'ava';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import { startTestApp, tempDir } from '../helpers/app.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';
import { openConnection, type Db } from '../../src/db/connection.js';
import { openPool } from '../../src/db/postgres.js';
import { migrations } from '../../src/db/migrations/index.js';
import { startMxZone } from './mx-zone.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, REMOTE_MX, outboundEnv, startSink } from './world.js';

test('forwards written before the outbound queue existed become queued forward items and are delivered', async (t) => {
  const dataDir = tempDir(t);
  // The schema of 008 on the lane's database: a data dir's SQLite file, or a PostgreSQL database the server is then pointed at.
  const url = onPostgres ? await freshPostgresDatabase(t) : null;
  const db: Db = url ? new Kysely({ dialect: new PostgresDialect({ pool: openPool(url) }) }) : openConnection(dataDir).db;
  const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '009'));
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => before } }).migrateToLatest();
  t.falsy(error);
  const now = Date.now();
  const raw = Buffer.from(`Received: from a (a [192.0.2.1]) by x; Thu, 26 Nov 2026 04:00:00 +0000\r\nFrom: <ann@${REMOTE_DOMAIN}>\r\nTo: <fwd@${ALIAS_DOMAIN}>\r\nSubject: from the old queue\r\n\r\nstill here\r\n`);
  const anyDb = db as any;
  await anyDb.insertInto('tenants').values({ id: 1, name: 'oldco', plan_active: 1, is_admin: 0, created_at: now }).execute();
  await anyDb.insertInto('inbound').values({
    id: 7, kind: 'smtp', status: 'stored', message: JSON.stringify({ mailFrom: `ann@${REMOTE_DOMAIN}` }),
    targets: JSON.stringify([{ tenantId: 1, mailboxIds: [], forwards: [`dest@${REMOTE_DOMAIN}`], address: `fwd@${ALIAS_DOMAIN}` }]),
    raw, raw_path: null, size: raw.length, error: null, created_at: now, done_at: null,
  }).execute();
  await anyDb.insertInto('forwards').values({ tenant_id: 1, inbound_id: 7, mail_from: `ann@${REMOTE_DOMAIN}`, address: `dest@${REMOTE_DOMAIN}`, next_attempt_at: now, last_error: null, created_at: now }).execute();
  await db.destroy();

  const zone = await startMxZone(t);
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  const sink = await startSink(t);
  const app = await startTestApp(t, { dataDir, env: { ...outboundEnv(zone, sink.port), ...(url ? { MAILSTEAD_DATABASE_URL: url } : {}) }, outboundTesting: { pollMs: 100, timeoutMs: 10_000 } });
  const m = await sink.nth(1);
  t.regex(m.from, /^SRS0=[^=]{4}=[^=]{2}=remote\.test=ann@alias\.test$/i);
  t.deepEqual(m.to, [`dest@${REMOTE_DOMAIN}`]);
  t.deepEqual(m.raw.subarray(m.raw.length - raw.length), raw);
  const key = await app.app.tenants.createKey('oldco', 'read');
  const items = (await app.get('/v1/outbound', key)).body.data;
  t.is(items.length, 1);
  t.like(items[0], { kind: 'forward', mail_from: `ann@${REMOTE_DOMAIN}`, rcpt_to: `dest@${REMOTE_DOMAIN}` });
  const tables = onPostgres
    ? (await sql<{ name: string | null }>`SELECT to_regclass('forwards')::text AS name`.execute(app.app.db)).rows.filter((r) => r.name !== null)
    : await app.app.db.selectFrom('sqlite_master' as any).select('name' as any).where('name' as any, '=', 'forwards').execute();
  t.deepEqual(tables, []);
});
