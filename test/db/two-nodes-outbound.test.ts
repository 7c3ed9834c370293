import test from 'ava';
import type { Db } from '../../src/db/connection.js';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { postgresOutboundClaims } from '../../src/outbound/claims.js';
import { freshPostgresDatabase } from '../helpers/pg.js';
import { eventually, sharedDatabase } from '../helpers/nodes.js';
import { startMxZone } from '../outbound/mx-zone.js';
import { message, outboundEnv, REMOTE_DOMAIN, REMOTE_MX, startSink } from '../outbound/world.js';

// The outbound queue on one PostgreSQL database shared by nodes (DECISIONS.md section 17). Items
// are written directly, as submission writes them (inbound mail is not on PostgreSQL yet).

/** A tenant and `count` submitted items to REMOTE_DOMAIN, each with its own message bytes, due now. */
async function plantItems(db: Db, count: number, tenantName = `out${process.pid}${Date.now()}`): Promise<{ tenantId: number; ids: number[] }> {
  const now = Date.now();
  const tenant = await db.insertInto('tenants').values({ name: tenantName, plan_active: 1, is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const from = 'ann@hosted.example';
    const rcpt = `r${i}@${REMOTE_DOMAIN}`;
    const ref = await db.insertInto('outbound_messages').values({ raw: Buffer.from(message(from, rcpt, `item ${i}`)), created_at: now }).returning('id').executeTakeFirstOrThrow();
    const row = await db.insertInto('outbound').values({
      tenant_id: tenant.id, kind: 'submission', email_id: null, inbound_id: null, message_ref: ref.id, mail_from: from, rcpt_to: rcpt,
      via_domain: null, auth: null, next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    ids.push(row.id);
  }
  return { tenantId: tenant.id, ids };
}

test('two claimers take each due item once, skip the items the other is trying, and take a dead one\'s again', async (t) => {
  const url = await freshPostgresDatabase(t);
  const [a, b] = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
  t.teardown(async () => { await a.close(); await b.close(); });
  const { ids } = await plantItems(a.db, 60);
  const [claimsA, claimsB] = [postgresOutboundClaims(a.session), postgresOutboundClaims(b.session)];

  // Claims in small bites, at the same time, none released: the items stay queued, as while tried.
  const taken = { a: [] as number[], b: [] as number[] };
  const drain = async (claims: typeof claimsA, into: number[]) => {
    for (let i = 0; i < 40; i++) {
      const rows = await claims.next(Date.now(), 7, []);
      if (rows.length === 0) return;
      into.push(...rows.map((r) => r.id));
    }
  };
  await Promise.all([drain(claimsA, taken.a), drain(claimsB, taken.b)]);
  t.deepEqual([...taken.a, ...taken.b].sort((x, y) => x - y), ids, 'every item claimed exactly once');
  t.true(taken.a.length > 0 && taken.b.length > 0, 'both claimers took some');
  t.deepEqual(await claimsA.next(Date.now(), 100, []), [], 'nothing left for A: its own and B\'s are under way');

  // B's outcomes are written: its items are free again (here still queued, so due again).
  await claimsB.release(taken.b);
  t.deepEqual((await claimsA.next(Date.now(), 100, [])).map((r) => r.id).sort((x, y) => x - y), [...taken.b].sort((x, y) => x - y));

  // A dies with every item claimed: PostgreSQL drops its locks, and B takes them all.
  await a.session.close();
  const again = await eventually('B takes A\'s items', async () => {
    const rows = await claimsB.next(Date.now(), 100, []);
    return rows.length > 0 ? rows : undefined;
  }, 10_000);
  t.is(again.length, ids.length);
});

test.serial('two nodes deliver each queued item once to a real SMTP sink; GET /v1/outbound lists them from either node', async (t) => {
  t.timeout(180_000);
  const zone = await startMxZone(t);
  const sink = await startSink(t);
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  const cluster = await sharedDatabase(t);
  const key = await cluster.tenantKey('outbound-owner');
  const owner = await cluster.admin.db.selectFrom('tenants').select('id').where('name', '=', 'outbound-owner').executeTakeFirstOrThrow();
  const { ids } = await plantItems(cluster.admin.db, 40);
  await cluster.admin.db.updateTable('outbound').set({ tenant_id: owner.id }).where('id', 'in', ids).execute();

  // Both workers look at the queue at start, at the same moment.
  const env = outboundEnv(zone, sink.port);
  const [a, b] = await Promise.all([cluster.startNode('a', env), cluster.startNode('b', env)]);
  await eventually('every item sent', async () => {
    const rows = await cluster.admin.db.selectFrom('outbound').select('status').execute();
    return rows.every((r) => r.status === 'sent') ? true : undefined;
  }, 90_000, 200);
  const delivered = sink.messages.flatMap((m) => m.to).sort();
  t.deepEqual(delivered, ids.map((_, i) => `r${i}@${REMOTE_DOMAIN}`).sort(), 'each recipient got its message once');
  const attempts = await cluster.admin.db.selectFrom('outbound').select('attempts').execute();
  t.deepEqual([...new Set(attempts.map((r) => r.attempts))], [1]);

  const fromA = await a.get('/v1/outbound?per_page=100', key);
  const fromB = await b.get('/v1/outbound?per_page=100', key);
  t.is(fromA.status, 200);
  t.is(fromA.body.data.length, 40);
  t.deepEqual(fromA.body, fromB.body);
  t.is((await b.get(`/v1/outbound/${ids[0]}`, key)).body.data.status, 'sent');
});

test.serial('an item deferred by the remote waits for its next try; POST /v1/outbound/{id}/retry on the other node sends it now', async (t) => {
  t.timeout(180_000);
  const zone = await startMxZone(t);
  const sink = await startSink(t, { answer: () => '451 4.7.1 try later' });
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  const cluster = await sharedDatabase(t);
  const key = await cluster.tenantKey('retry-owner');
  const owner = await cluster.admin.db.selectFrom('tenants').select('id').where('name', '=', 'retry-owner').executeTakeFirstOrThrow();
  const { ids: [id] } = await plantItems(cluster.admin.db, 1);
  await cluster.admin.db.updateTable('outbound').set({ tenant_id: owner.id }).where('id', '=', id!).execute();

  const env = { ...outboundEnv(zone, sink.port), MAILSTEAD_OUTBOUND_RETRY_SCHEDULE: '3600' };
  const [a, b] = await Promise.all([cluster.startNode('a', env), cluster.startNode('b', env)]);
  const deferred = await eventually('the first try deferred', async () => {
    const r = await a.get(`/v1/outbound/${id}`, key);
    return r.body.data?.attempts === 1 ? r.body.data : undefined;
  }, 60_000, 200);
  t.is(deferred.status, 'queued');
  t.regex(deferred.last_response, /^451 /);
  t.true(Date.parse(deferred.next_attempt_at) > Date.now() + 3000_000, 'next try in an hour');

  sink.setAnswer(() => null);
  t.deepEqual((await b.post(`/v1/outbound/${id}/retry`, key)).body, { status: 'success' });
  const sent = await eventually('sent after the retry', async () => {
    const r = await a.get(`/v1/outbound/${id}`, key);
    return r.body.data?.status === 'sent' ? r.body.data : undefined;
  }, 30_000, 100);
  t.is(sent.attempts, 2);
  t.is(sink.messages.length, 1, 'accepted once');
  t.is((await a.post(`/v1/outbound/${id}/retry`, key)).status, 422, 'a sent item is not tried again');
});
