import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connection.js';
import { backendOf } from '../../src/db/backend.js';
import { migrations } from '../../src/db/migrations/index.js';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { runAlone } from '../../src/db/pg-session.js';
import { postgresOutboundClaims } from '../../src/outbound/claims.js';
import { postgresClaims } from '../../src/tasks/postgres/claims.js';
import { postgresDeliveryClaims } from '../../src/webhooks/postgres/claims.js';
import { createDeliveryStore } from '../../src/webhooks/delivery-store.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { freshPostgresDatabase } from '../helpers/pg.js';
import { runCli } from '../helpers/process.js';

const appliedMigrations = async (db: Db) =>
  (await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db)).rows.map((r) => r.name);
const tables = async (db: Db) =>
  (await sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`.execute(db)).rows.map((r) => r.table_name);

test('the numbered migrations run to the latest on a fresh PostgreSQL database, and again without change', async (t) => {
  const url = await freshPostgresDatabase(t);
  const first = await openPostgresDatabase(url);
  t.is(first.dialect, 'postgres');
  t.is(backendOf(first.db).kind, 'postgres');
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

const newTask = (db: Db, kind = 'test.claim') =>
  db.insertInto('tasks').values({ kind, tenant_id: null, key_id: null, domain: '', status: 'queued', payload: '{}', total_email: 0, run_after: 0, created_at: Date.now() })
    .returning('id').executeTakeFirstOrThrow().then((r) => r.id);

test('two nodes claiming at once take each task once (FOR UPDATE SKIP LOCKED)', async (t) => {
  const url = await freshPostgresDatabase(t);
  const [a, b] = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
  t.teardown(async () => { await a.close(); await b.close(); });
  const [claimsA, claimsB] = [postgresClaims(a.db, a.session), postgresClaims(b.db, b.session)];

  const one = await newTask(a.db);
  const both = await Promise.all([claimsA.claimNext(Date.now(), ['test.claim']), claimsB.claimNext(Date.now(), ['test.claim'])]);
  t.deepEqual(both.filter(Boolean).map((r) => r!.id), [one], 'one claimer got it, the other nothing');
  await a.db.updateTable('tasks').set({ status: 'completed' }).where('id', '=', one).execute();

  const ids: number[] = [];
  for (let i = 0; i < 30; i++) ids.push(await newTask(a.db));
  const taken = { a: [] as number[], b: [] as number[] };
  const drain = async (claims: typeof claimsA, into: number[]) => {
    for (let i = 0; i < 40; i++) {
      const row = await claims.claimNext(Date.now(), ['test.claim']);
      if (!row) return;
      into.push(row.id);
    }
  };
  await Promise.all([drain(claimsA, taken.a), drain(claimsB, taken.b), drain(claimsA, taken.a), drain(claimsB, taken.b)]);
  t.deepEqual([...taken.a, ...taken.b].sort((x, y) => x - y), ids, 'every task claimed exactly once');
  t.true(taken.a.length > 0 && taken.b.length > 0, 'both nodes took some');
});

test('a running task is queued again only once the node that claimed it is gone', async (t) => {
  const url = await freshPostgresDatabase(t);
  const [a, b] = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
  t.teardown(async () => { await a.close(); await b.close(); });
  const [claimsA, claimsB] = [postgresClaims(a.db, a.session), postgresClaims(b.db, b.session)];
  const id = await newTask(a.db);
  t.is((await claimsA.claimNext(Date.now(), ['test.claim']))!.id, id);
  t.is(await claimsB.recover(false), 0, 'node A is alive and runs it');
  t.is(await claimsA.recover(false), 0, 'a node does not take back its own running task');
  await a.session.close(); // node A dies: PostgreSQL drops its session locks
  // ...once its backend has ended, a moment after the socket closed: B's minute job looks again until then.
  let recovered = 0;
  for (let i = 0; i < 100 && recovered === 0; i++) {
    recovered = await claimsB.recover(false);
    if (recovered === 0) await new Promise((r) => setTimeout(r, 50));
  }
  t.is(recovered, 1);
  t.is((await claimsB.claimNext(Date.now(), ['test.claim']))!.id, id);
});

/** A due outbound item (with a tenant to own it); its id. */
async function newOutboundItem(db: Db, rcpt: string): Promise<number> {
  const now = Date.now();
  const tenant = await db.insertInto('tenants').values({ name: `t-${rcpt}`, plan_active: 1, is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
  const row = await db.insertInto('outbound').values({
    tenant_id: tenant.id, kind: 'forward', email_id: null, inbound_id: null, message_ref: null, mail_from: '', rcpt_to: rcpt,
    via_domain: null, auth: null, next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

test('outbound claims: an item being tried in another database of the cluster does not hide the item with the same id here', async (t) => {
  // pg_locks lists the advisory locks of every database; two Mailsteads (or two test servers) on one
  // cluster number their items alike.
  const [urlA, urlB] = [await freshPostgresDatabase(t), await freshPostgresDatabase(t)];
  const [a, b] = [await openPostgresDatabase(urlA), await openPostgresDatabase(urlB)];
  t.teardown(async () => { await a.close(); await b.close(); });
  const [idA, idB] = [await newOutboundItem(a.db, 'x@remote.test'), await newOutboundItem(b.db, 'y@remote.test')];
  t.is(idA, idB, 'the same id in both databases');
  const [claimsA, claimsB] = [postgresOutboundClaims(a.session), postgresOutboundClaims(b.session)];
  t.deepEqual((await claimsA.next(Date.now(), 10, [])).map((r) => r.rcpt_to), ['x@remote.test'], 'A is trying its item');
  t.deepEqual((await claimsB.next(Date.now(), 10, [])).map((r) => r.rcpt_to), ['y@remote.test'], 'B takes its own item meanwhile');
  t.deepEqual(await claimsB.next(Date.now(), 10, []), [], 'and only once');
  await claimsB.release([idB]);
  t.deepEqual((await claimsB.next(Date.now(), 10, [])).map((r) => r.id), [idB], 'released, it is due again');
});

test('webhook deliveries: a node claiming skips the rows another node is claiming (SKIP LOCKED)', async (t) => {
  const url = await freshPostgresDatabase(t);
  const [a, b] = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
  t.teardown(async () => { await a.close(); await b.close(); });
  const now = Date.now();
  const tenant = await a.db.insertInto('tenants').values({ name: 'hooks', plan_active: 1, is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
  const hook = await a.db.insertInto('webhooks').values({ tenant_id: tenant.id, url: 'https://hooks.example/in', event_mask: 1, is_active: 1, secret: 's', created_at: now, updated_at: now } as never)
    .returning('id').executeTakeFirstOrThrow();
  for (let i = 0; i < 10; i++) {
    await a.db.insertInto('webhook_deliveries').values({ webhook_id: hook.id, event_id: i, event_type: 'email.received', email_id: i, mailbox_id: 1, event_at: now, next_attempt_at: now, created_at: now } as never).execute();
  }
  const deliveries = createDeliveryStore();
  let releaseA!: () => void;
  const holdA = new Promise<void>((r) => { releaseA = r; });
  let aClaimed!: () => void;
  const aHasClaimed = new Promise<void>((r) => { aClaimed = r; });
  const nodeA = deliveries.bookkeeping(a.db, async (trx) => {
    const claimed = await deliveries.claim(trx, await deliveries.dueFor(trx, hook.id, now, 6));
    aClaimed();
    await holdA; // A's transaction stays open, its rows locked, while B claims
    return claimed.map((d) => d.id);
  });
  await aHasClaimed;
  const fromB = await deliveries.bookkeeping(b.db, async (trx) => (await deliveries.claim(trx, await deliveries.dueFor(trx, hook.id, now, 10))).map((d) => d.id));
  releaseA();
  const fromA = await nodeA;
  t.is(fromA.length, 6);
  t.is(fromB.length, 4, 'B took the rest without waiting for A');
  t.deepEqual(fromA.filter((id) => fromB.includes(id)), []);
});

test('webhook deliveries left sending go back to the queue only once the node that claimed them is gone', async (t) => {
  const url = await freshPostgresDatabase(t);
  const [a, b] = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
  t.teardown(async () => { await a.close(); await b.close(); });
  const now = Date.now();
  const tenant = await a.db.insertInto('tenants').values({ name: 'hooks', plan_active: 1, is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
  const hook = await a.db.insertInto('webhooks').values({ tenant_id: tenant.id, url: 'https://hooks.example/in', event_mask: 1, is_active: 1, secret: 's', created_at: now, updated_at: now } as never)
    .returning('id').executeTakeFirstOrThrow();
  for (let i = 0; i < 4; i++) {
    await a.db.insertInto('webhook_deliveries').values({ webhook_id: hook.id, event_id: i, event_type: 'email.received', email_id: i, mailbox_id: 1, event_at: now, next_attempt_at: now, created_at: now } as never).execute();
  }
  const deliveries = createDeliveryStore();
  const [claimsA, claimsB] = [postgresDeliveryClaims(a.db, a.session), postgresDeliveryClaims(b.db, b.session)];
  const take = (node: typeof a, claims: typeof claimsA, n: number) => deliveries.bookkeeping(node.db, async (trx) => {
    const ids = (await deliveries.claim(trx, await deliveries.dueFor(trx, hook.id, now, n))).map((d) => d.id);
    await claims.hold(ids);
    return ids;
  });
  const fromA = await take(a, claimsA, 2);
  const fromB = await take(b, claimsB, 2);
  t.is(fromA.length + fromB.length, 4);
  t.is(await claimsB.recover(false), 0, 'both nodes are alive: nothing goes back');
  t.is(await claimsA.recover(false), 0, 'not even a node\'s own deliveries under way');
  await claimsB.letGo(fromB); // B's outcomes were written (here: nothing written, so they stay sending, released)
  await a.session.close(); // node A dies: PostgreSQL drops its session locks
  // The backend of A's connection ends a moment after the connection closes: look again, bounded.
  let back = 0;
  for (let i = 0; i < 100 && back < 4; i++) {
    back += await claimsB.recover(false);
    if (back < 4) await new Promise((r) => setTimeout(r, 50));
  }
  t.is(back, 4, 'A\'s deliveries, and B\'s no longer held, go back');
  const statuses = await a.db.selectFrom('webhook_deliveries').select('status').execute();
  t.deepEqual(statuses.map((r) => r.status), ['queued', 'queued', 'queued', 'queued']);
});

test('a cron job runs on one node: the first to take it keeps it while it lives, another takes over once it is gone', async (t) => {
  const url = await freshPostgresDatabase(t);
  const [a, b] = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
  t.teardown(async () => { await a.close(); await b.close(); });
  let finish!: () => void;
  const running = new Promise<void>((r) => { finish = r; });
  let started!: () => void;
  const hasStarted = new Promise<void>((r) => { started = r; });
  const onA = runAlone(a.session, 'tasks.prune', async () => { started(); await running; });
  await hasStarted;
  t.is(await runAlone(b.session, 'tasks.prune', () => t.fail('ran twice')), 'skipped');
  t.is(await runAlone(b.session, 'webhooks.sweep', () => undefined), 'ran', 'another job is not held up');
  finish();
  t.is(await onA, 'ran');
  t.is(await runAlone(b.session, 'tasks.prune', () => t.fail('ran on a second node in the same tick')), 'skipped', 'a later tick of B is still A\'s');
  t.is(await runAlone(a.session, 'tasks.prune', () => undefined), 'ran', 'A runs its next tick');
  await a.session.close(); // node A dies: PostgreSQL drops its session locks
  // ...once its backend has ended, which may come a moment after the socket closed: B's next ticks take it.
  let outcome = 'skipped';
  for (let tick = 0; tick < 100 && outcome === 'skipped'; tick++) {
    outcome = await runAlone(b.session, 'tasks.prune', () => undefined);
    if (outcome === 'skipped') await new Promise((r) => setTimeout(r, 50));
  }
  t.is(outcome, 'ran');
});

test('the CLI works against MAILSTEAD_DATABASE_URL: its tenants and keys reach a server on the same database', async (t) => {
  const url = await freshPostgresDatabase(t);
  const app = await startTestApp(t, { env: { MAILSTEAD_DATABASE_URL: url } });
  const cli = (args: string[]) => runCli(tempDir(t), args, { MAILSTEAD_DATABASE_URL: url }); // a data dir of its own: only the URL is shared
  t.is((await cli(['tenant', 'create', 'acme', '--plan', 'active'])).code, 0);
  const key = await cli(['key', 'create', '--tenant', 'acme', '--perms', 'read,write']);
  t.is(key.code, 0, key.stderr);
  const k = key.stdout.trim();
  t.is((await app.post('/v1/create/domain', k, { Domain: 'cli.example' })).status, 200);
  t.is((await cli(['key', 'revoke', k])).code, 0);
  t.is((await app.get('/v1/list/domain', k)).status, 401);
  // backup runs pg_dump (test/cli/backup-restore.test.ts restores it): custom format.
  const file = join(tempDir(t), 'copy.dump');
  const backup = await cli(['backup', file]);
  t.is(backup.code, 0, backup.stderr);
  t.is(readFileSync(file).subarray(0, 5).toString('latin1'), 'PGDMP');
});
