import test, { type ExecutionContext } from 'ava';
import { manualClock, type Clock } from '../../src/clock.js';
import type { EventType } from '../../src/webhooks/events.js';
import { RETRY_DELAYS_MS } from '../../src/webhooks/schedule.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { createWebhook, deliveriesOf, recordEvents, startReceiver, tenantOf, waitFor } from '../helpers/webhooks.js';

const PRIVATE_OK = { MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' };

/** Waits until the webhook's only delivery shows `attempts` attempts and is no longer being sent. */
async function settled(app: TestClient, key: string, webhookId: number, attempts: number) {
  return waitFor(async () => {
    const [d] = await deliveriesOf(app, key, webhookId);
    return d && d.attempts === attempts && d.status !== 'sending' ? d : null;
  }, `delivery with ${attempts} attempt(s)`);
}

/** A webhook on a fresh app (private targets allowed), its receiver, and one recorded event for it. */
async function hookWithOneEvent(t: ExecutionContext, o: {
  clock?: Clock; receiver?: Parameters<typeof startReceiver>[1]; event: EventType; emailId: number; mailboxId: number;
}) {
  const app = await startTestApp(t, { env: PRIVATE_OK, clock: o.clock });
  const receiver = await startReceiver(t, o.receiver);
  const key = await app.keyFor();
  const hook = await createWebhook(app, key, { url: receiver.url, events: [o.event] });
  await recordEvents(app, await tenantOf(app, key), [{ type: o.event, emailId: o.emailId, mailboxId: o.mailboxId }]);
  return { app, receiver, key, hook };
}

test('after a 500 the next attempt comes on schedule, and after a success none follows', async (t) => {
  const clock = manualClock();
  const { app, receiver, key, hook } = await hookWithOneEvent(t, { clock, receiver: { script: [{ status: 500, body: 'database down' }] }, event: 'email.received', emailId: 5, mailboxId: 6 });

  const [first] = await receiver.waitForCount(1);
  const d1 = await settled(app, key, hook.id, 1);
  t.is(d1.status, 'queued');
  t.is(d1.event, 'email.received');
  t.is(d1.email_id, 5);
  t.is(d1.mailbox_id, 6);
  t.is(d1.delivered_at, null);
  const wait = Date.parse(d1.next_attempt_at) - clock.now();
  t.true(wait >= 5000 && wait <= 5500, String(wait));
  t.is(d1.recent_attempts.length, 1);
  t.like(d1.recent_attempts[0], { attempt: 1, status_code: 500, error: 'HTTP 500: database down' });
  t.true(Number.isInteger(d1.recent_attempts[0].latency_ms));

  clock.advance(4000);
  app.app.webhooks.engine.wake();
  await app.app.webhooks.engine.idle();
  t.is(receiver.requests.length, 1);

  clock.advance(1600);
  app.app.webhooks.engine.wake();
  const second = (await receiver.waitForCount(2))[1];
  t.is(second.headers['x-webhook-id'], first.headers['x-webhook-id']);
  t.deepEqual(second.body, first.body);
  t.not(second.headers['x-webhook-timestamp'], first.headers['x-webhook-timestamp']);
  const d2 = await settled(app, key, hook.id, 2);
  t.is(d2.status, 'delivered');
  t.is(d2.next_attempt_at, null);
  t.truthy(d2.delivered_at);
  t.deepEqual(d2.recent_attempts.map((a: any) => [a.attempt, a.status_code, a.error]), [[2, 200, null], [1, 500, 'HTTP 500: database down']]);

  clock.advance(48 * 3600e3);
  app.app.webhooks.engine.wake();
  await app.app.webhooks.engine.idle();
  t.is(receiver.requests.length, 2);
});

test('a delivery whose first attempt failed is still delivered after a restart', async (t) => {
  const clock = manualClock();
  const { app: first, receiver, key, hook } = await hookWithOneEvent(t, { clock, receiver: { script: [{ status: 502 }] }, event: 'email.deleted', emailId: 9, mailboxId: 1 });
  await receiver.waitForCount(1);
  await settled(first, key, hook.id, 1);
  await first.stop();

  clock.advance(10_000);
  const second = await startTestApp(t, { env: PRIVATE_OK, clock, dataDir: first.dataDir });
  const got = await receiver.waitForCount(2);
  t.is(got[1].headers['x-webhook-id'], got[0].headers['x-webhook-id']);
  const d = await settled(second, key, hook.id, 2);
  t.is(d.status, 'delivered');
});

test('a delivery interrupted by a shutdown is sent again after the restart', async (t) => {
  const { app: first, receiver, key, hook } = await hookWithOneEvent(t, { receiver: { script: [{ hang: true }] }, event: 'email.read', emailId: 3, mailboxId: 1 });
  await receiver.waitForCount(1);
  await first.stop();

  const second = await startTestApp(t, { env: PRIVATE_OK, dataDir: first.dataDir });
  const got = await receiver.waitForCount(2);
  t.is(got[1].headers['x-webhook-id'], got[0].headers['x-webhook-id']);
  const d = await settled(second, key, hook.id, 1);
  t.is(d.status, 'delivered');
});

test('410 Gone deactivates the webhook at once', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const receiver = await startReceiver(t, { fallback: { status: 410 } });
  const key = await app.keyFor();
  const tenant = await tenantOf(app, key);
  const hook = await createWebhook(app, key, { url: receiver.url, events: ['email.received'] });
  await recordEvents(app, tenant, [{ type: 'email.received', emailId: 1, mailboxId: 1 }]);
  await receiver.waitForCount(1);
  const d = await settled(app, key, hook.id, 1);
  t.is(d.status, 'failed');
  t.is(d.recent_attempts[0].status_code, 410);
  t.false((await app.get('/v1/webhooks', key)).body.data[0].is_active);

  await recordEvents(app, tenant, [{ type: 'email.received', emailId: 2, mailboxId: 1 }]);
  app.app.webhooks.engine.wake();
  await app.app.webhooks.engine.idle();
  t.is(receiver.requests.length, 1);
  t.is((await deliveriesOf(app, key, hook.id)).length, 1);
});

test('Retry-After on 503 and 429 sets the next attempt instead of the schedule', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { env: PRIVATE_OK, clock });
  const receiver = await startReceiver(t, {
    script: [{ status: 503, headers: { 'retry-after': '120' } }, { status: 429, headers: { 'retry-after': new Date(clock.now() + 3600e3).toUTCString() } }],
  });
  const key = await app.keyFor();
  const hook = await createWebhook(app, key, { url: receiver.url, events: ['email.received'] });
  await recordEvents(app, await tenantOf(app, key), [{ type: 'email.received', emailId: 1, mailboxId: 1 }]);
  await receiver.waitForCount(1);
  const d1 = await settled(app, key, hook.id, 1);
  t.is(Date.parse(d1.next_attempt_at) - clock.now(), 120_000);

  clock.advance(60_000);
  app.app.webhooks.engine.wake();
  await app.app.webhooks.engine.idle();
  t.is(receiver.requests.length, 1);
  clock.advance(60_000);
  app.app.webhooks.engine.wake();
  await receiver.waitForCount(2);
  const d2 = await settled(app, key, hook.id, 2);
  t.is(d2.recent_attempts[0].status_code, 429);
  // An HTTP-date Retry-After (whole seconds), an hour after the first attempt: 58 minutes from this one.
  const left = Date.parse(d2.next_attempt_at) - clock.now();
  t.true(Math.abs(left - (3600e3 - 120_000)) <= 1000, String(left));
  clock.advance(3600e3);
  app.app.webhooks.engine.wake();
  await receiver.waitForCount(3);
  t.is((await settled(app, key, hook.id, 3)).status, 'delivered');
});

test('the schedule ends in failed after ten attempts; a webhook failing for five days is deactivated', async (t) => {
  const clock = manualClock();
  const { app, receiver, key, hook } = await hookWithOneEvent(t, { clock, receiver: { fallback: { status: 500 } }, event: 'email.received', emailId: 1, mailboxId: 1 });
  await receiver.waitForCount(1);
  await settled(app, key, hook.id, 1);
  for (let i = 0; i < RETRY_DELAYS_MS.length; i++) {
    clock.advance(Math.ceil(RETRY_DELAYS_MS[i] * 1.1) + 1000);
    app.app.webhooks.engine.wake();
    await receiver.waitForCount(i + 2);
    await settled(app, key, hook.id, i + 2);
  }
  const [d] = await deliveriesOf(app, key, hook.id);
  t.is(d.status, 'failed');
  t.is(d.attempts, 10);
  t.is(d.next_attempt_at, null);
  t.is(d.recent_attempts.length, 10);
  clock.advance(30 * 3600e3);
  app.app.webhooks.engine.wake();
  await app.app.webhooks.engine.idle();
  t.is(receiver.requests.length, 10);

  // Less than five days since the first failure: the sweep leaves it active; past five days it does not.
  await app.app.cron.run('webhooks.sweep');
  t.true((await app.get('/v1/webhooks', key)).body.data[0].is_active);
  clock.advance(24 * 3600e3);
  await app.app.cron.run('webhooks.sweep');
  t.false((await app.get('/v1/webhooks', key)).body.data[0].is_active);
});

test('a success ends the failing streak, so the sweep keeps the webhook', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { env: PRIVATE_OK, clock });
  const receiver = await startReceiver(t, { script: [{ status: 500 }] });
  const key = await app.keyFor();
  const tenant = await tenantOf(app, key);
  const hook = await createWebhook(app, key, { url: receiver.url, events: ['email.received'] });
  await recordEvents(app, tenant, [{ type: 'email.received', emailId: 1, mailboxId: 1 }]);
  await receiver.waitForCount(1);
  await settled(app, key, hook.id, 1);
  clock.advance(6000);
  app.app.webhooks.engine.wake();
  await receiver.waitForCount(2);
  await settled(app, key, hook.id, 2);
  clock.advance(6 * 24 * 3600e3);
  await app.app.cron.run('webhooks.sweep');
  t.true((await app.get('/v1/webhooks', key)).body.data[0].is_active);
});

test('replay sends a delivery again with the same X-Webhook-Id', async (t) => {
  const { app, receiver, key, hook } = await hookWithOneEvent(t, { event: 'email.read', emailId: 77, mailboxId: 8 });
  const [first] = await receiver.waitForCount(1);
  const d = await settled(app, key, hook.id, 1);
  t.is(d.status, 'delivered');

  const r = await app.post(`/v1/webhooks/${hook.id}/deliveries/${d.id}/replay`, key);
  t.is(r.status, 200);
  t.deepEqual(r.body, { status: 'success' });
  const again = (await receiver.waitForCount(2))[1];
  t.is(again.headers['x-webhook-id'], first.headers['x-webhook-id']);
  t.is(again.headers['x-webhook-id'], String(d.id));
  t.deepEqual(again.body, first.body);
  t.is((await settled(app, key, hook.id, 2)).status, 'delivered');

  t.is((await app.post(`/v1/webhooks/${hook.id}/deliveries/${d.id + 1000}/replay`, key)).status, 404);
  await app.patch(`/v1/webhooks/${hook.id}`, key, { is_active: false });
  const inactive = await app.post(`/v1/webhooks/${hook.id}/deliveries/${d.id}/replay`, key);
  t.is(inactive.status, 422);
  t.is(inactive.body.reason, 'Webhook is not active');
});

test('a failed replay is not retried on the schedule', async (t) => {
  const clock = manualClock();
  const { app, receiver, key, hook } = await hookWithOneEvent(t, { clock, receiver: { script: [{ status: 200 }], fallback: { status: 500 } }, event: 'email.read', emailId: 1, mailboxId: 1 });
  await receiver.waitForCount(1);
  const d = await settled(app, key, hook.id, 1);
  t.is((await app.post(`/v1/webhooks/${hook.id}/deliveries/${d.id}/replay`, key)).status, 200);
  await receiver.waitForCount(2);
  t.is((await settled(app, key, hook.id, 2)).status, 'failed');
  clock.advance(3600e3);
  app.app.webhooks.engine.wake();
  await app.app.webhooks.engine.idle();
  t.is(receiver.requests.length, 2);
});

test('deleting a webhook drops its queued deliveries', async (t) => {
  const clock = manualClock();
  const { app, receiver, key, hook } = await hookWithOneEvent(t, { clock, receiver: { script: [{ status: 500 }] }, event: 'email.received', emailId: 1, mailboxId: 1 });
  await receiver.waitForCount(1);
  t.is((await settled(app, key, hook.id, 1)).status, 'queued');

  t.is((await app.del(`/v1/webhooks/${hook.id}`, key)).status, 200);
  const left = await app.app.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).execute();
  t.deepEqual(left, []);
  clock.advance(3600e3);
  app.app.webhooks.engine.wake();
  await app.app.webhooks.engine.idle();
  t.is(receiver.requests.length, 1);
});

test('deactivating a webhook cancels its queued retries', async (t) => {
  const clock = manualClock();
  const { app, receiver, key, hook } = await hookWithOneEvent(t, { clock, receiver: { script: [{ status: 500 }] }, event: 'email.received', emailId: 1, mailboxId: 1 });
  await receiver.waitForCount(1);
  await settled(app, key, hook.id, 1);
  await app.patch(`/v1/webhooks/${hook.id}`, key, { is_active: false });
  t.is((await deliveriesOf(app, key, hook.id))[0].status, 'failed');
  await app.patch(`/v1/webhooks/${hook.id}`, key, { is_active: true });
  clock.advance(3600e3);
  app.app.webhooks.engine.wake();
  await app.app.webhooks.engine.idle();
  t.is(receiver.requests.length, 1);
});
