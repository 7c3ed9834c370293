import test from 'ava';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/clock.js';
import { postgresDeliveryClaims } from '../../src/webhooks/postgres/claims.js';
import { createEventRecorder } from '../../src/webhooks/events.js';
import type { Cluster } from '../helpers/nodes.js';
import { eventually, sharedDatabase, startNodes } from '../helpers/nodes.js';

// Two server processes on one PostgreSQL database (DECISIONS.md section 17): webhook deliveries.

const NODE_ENV = { MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' };

/**
 * A real HTTP receiver on 127.0.0.1 that counts the POSTs of each delivery (X-Webhook-Id). While
 * `holding`, it keeps requests waiting without an answer; otherwise it answers 200 at once.
 */
async function receiver(t: { teardown(fn: () => unknown): void }) {
  const seen = new Map<string, number>();
  const held: ServerResponse[] = [];
  const state = { holding: false };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['x-webhook-id']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      if (state.holding) held.push(res); else res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, seen, state, total: () => [...seen.values()].reduce((a, b) => a + b, 0) };
}

/** A webhook of a new tenant and `count` deliveries due now, written as the event recorder writes them. */
async function plantDeliveries(cluster: Cluster, url: string, count: number): Promise<number[]> {
  const { db } = cluster.admin;
  const now = Date.now();
  const tenant = await db.insertInto('tenants').values({ name: `hooks${process.pid}${now}`, plan_active: 1, is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
  const hook = await db.insertInto('webhooks').values({ tenant_id: tenant.id, url, event_mask: 1, is_active: 1, secret: 'ab'.repeat(32), created_at: now, updated_at: now } as never)
    .returning('id').executeTakeFirstOrThrow();
  const rows = Array.from({ length: count }, (_, i) => ({
    webhook_id: hook.id, event_id: i + 1, event_type: 'email.received', email_id: i + 1, mailbox_id: 1, event_at: now, status: 'queued', next_attempt_at: now, created_at: now,
  }));
  const ids = await db.insertInto('webhook_deliveries').values(rows as never).returning('id').execute();
  return ids.map((r) => r.id);
}

const statuses = async (cluster: Cluster) =>
  (await cluster.admin.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).orderBy('id').execute());

test.serial('deliveries due when two nodes start are each sent once, though both claim', async (t) => {
  t.timeout(180_000);
  const cluster = await sharedDatabase(t);
  const hook = await receiver(t);
  const ids = await plantDeliveries(cluster, hook.url, 200);
  // Both engines learn at start that these are due, and claim at once.
  await Promise.all([cluster.startNode('a', NODE_ENV), cluster.startNode('b', NODE_ENV)]);
  await eventually('every delivery delivered', async () => ((await statuses(cluster)).every((r) => r.status === 'delivered') ? true : undefined), 60_000);
  t.is(hook.seen.size, ids.length);
  t.deepEqual([...new Set(hook.seen.values())], [1], 'each delivery POSTed once');
  t.deepEqual([...new Set((await statuses(cluster)).map((r) => r.attempts))], [1]);
  const attempts = await cluster.admin.db.selectFrom('webhook_attempts').select('delivery_id').execute();
  t.is(attempts.length, ids.length, 'one attempt logged per delivery');
});

test.serial('deliveries a live node is sending stay its own; those of a SIGKILLed node go back to the queue and the other node sends them', async (t) => {
  t.timeout(240_000);
  const cluster = await sharedDatabase(t);
  const hook = await receiver(t);
  hook.state.holding = true;
  const ids = await plantDeliveries(cluster, hook.url, 5);
  const a = await cluster.startNode('a', NODE_ENV);
  await eventually('A sends all five (held by the receiver)', async () => (hook.seen.size === ids.length ? true : undefined), 60_000);
  t.deepEqual((await statuses(cluster)).map((r) => r.status), ids.map(() => 'sending'));

  // What a node starting now runs first, here from the test's own connection (no start-up time to
  // race A's 15 s request timeout): it finds every delivery held by a live node and leaves them.
  t.is(await postgresDeliveryClaims(cluster.admin.db, cluster.admin.session).recover(true), 0);
  // B starts while A's requests are under way (the sender waits 15 s for an answer): its start-up
  // recovery must leave them alone, so nothing is sent twice.
  // Its start-up recovery has run by the time it listens (app.start awaits webhooks.start first).
  const b = await cluster.startNode('b', NODE_ENV);
  t.notRegex(b.output(), /webhook deliveries left in flight were queued again/, 'a live node\'s deliveries are not taken back');
  // Each is still A's: sending, or (when B's start outlasted A's 15 s request timeout, as on a
  // loaded host) ended by A itself with a logged attempt, never put back by B without one.
  const attempted = new Set((await cluster.admin.db.selectFrom('webhook_attempts').select('delivery_id').execute()).map((r) => r.delivery_id));
  const rows = await cluster.admin.db.selectFrom('webhook_deliveries').select(['id', 'status']).orderBy('id').execute();
  t.deepEqual(rows.filter((r) => r.status !== 'sending' && !attempted.has(r.id)), [], 'no delivery taken from A');
  t.is(hook.total(), ids.length, 'nothing re-sent while A lives');

  await a.kill();
  hook.state.holding = false;
  // webhooks.sweep (every minute, on one node: B, once A and its locks are gone) puts them back; B sends them.
  await eventually('B delivers them', async () => ((await statuses(cluster)).every((r) => r.status === 'delivered') ? true : undefined), 150_000, 200);
  t.deepEqual([...hook.seen.values()], ids.map(() => 2), 'each sent by A (no answer: A died) and once more by B');
  t.regex(b.output(), /webhook deliveries of a node that is gone were queued again/);
});

test.serial('events recorded by another process reach the nodes through NOTIFY and each delivery is sent once', async (t) => {
  t.timeout(180_000);
  const { cluster, nodes: [a] } = await startNodes(t, 2, NODE_ENV);
  const hook = await receiver(t);
  const key = await cluster.tenantKey();
  const created = await a!.post('/v1/webhooks', key, { url: hook.url, events: ['email.received'] });
  t.is(created.status, 200, JSON.stringify(created.body));
  const tenant = await cluster.admin.db.selectFrom('webhooks').select('tenant_id').where('id', '=', created.body.data.id).executeTakeFirstOrThrow();

  // The recorder as inbound mail runs it, here in the test's own process: neither node recorded
  // these, so only the NOTIFY sent at commit can tell them.
  const recorder = createEventRecorder({ clock: systemClock });
  const events = Array.from({ length: 50 }, (_, i) => ({ tenantId: tenant.tenant_id, type: 'email.received' as const, emailId: 1000 + i, mailboxId: 7 }));
  await cluster.admin.db.transaction().execute((trx) => recorder.record(trx, events));

  await eventually('every delivery delivered', async () => {
    const rows = await statuses(cluster);
    return rows.length === 50 && rows.every((r) => r.status === 'delivered') ? true : undefined;
  }, 30_000, 100);
  t.is(hook.seen.size, 50);
  t.deepEqual([...new Set(hook.seen.values())], [1], 'each delivery POSTed once');
});
