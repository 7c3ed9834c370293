import test from 'ava';
import { PER_WEBHOOK_CONCURRENCY } from '../../src/webhooks/engine.js';
import { startTestApp } from '../helpers/app.js';
import { createWebhook, deliveriesOf, recordEvents, startReceiver, tenantOf, waitFor } from '../helpers/webhooks.js';

const PRIVATE_OK = { MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' };

test('each of the three events is delivered with its payload to subscribed webhooks only', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const all = await startReceiver(t);
  const readOnly = await startReceiver(t);
  const inactive = await startReceiver(t);
  const foreign = await startReceiver(t);
  const key = await app.keyFor();
  const tenant = await tenantOf(app, key);
  const allHook = await createWebhook(app, key, { url: all.url, events: ['email.received', 'email.read', 'email.deleted'] });
  await createWebhook(app, key, { url: readOnly.url, events: ['email.read'] });
  const off = await createWebhook(app, key, { url: inactive.url, events: ['email.received', 'email.read', 'email.deleted'], is_active: false });
  const other = await app.keyFor();
  await createWebhook(app, other, { url: foreign.url, events: ['email.received', 'email.read', 'email.deleted'] });

  t.false('last_triggered_at' in (await app.get('/v1/webhooks', key)).body.data[0]);
  await recordEvents(app, tenant, [
    { type: 'email.received', emailId: 10, mailboxId: 3 },
    { type: 'email.read', emailId: 10, mailboxId: 3 },
    { type: 'email.deleted', emailId: 11, mailboxId: 4 },
  ]);
  const got = await all.waitForCount(3);
  const byEvent = new Map(got.map((r) => [r.headers['x-webhook-event'], r.body]));
  for (const [event, email, mailbox] of [['email.received', 10, 3], ['email.read', 10, 3], ['email.deleted', 11, 4]] as const) {
    const body = byEvent.get(event);
    // email.received adds where the message was filed and its spam verdict (none here: these events name no stored email).
    const filing = event === 'email.received' ? { folder: 'INBOX', spam_verdict: null } : {};
    t.deepEqual(body, { event, timestamp: body.timestamp, data: { email_id: email, mailbox_id: mailbox, ...filing } }, event);
    t.true(Number.isInteger(body.timestamp));
  }
  t.is(new Set(got.map((r) => r.headers['x-webhook-id'])).size, 3);
  const [read] = await readOnly.waitForCount(1);
  t.is(read.body.event, 'email.read');

  // The fan-out happened in the recording transaction; the rest must stay silent.
  await waitFor(async () => (await deliveriesOf(app, key, allHook.id)).every((d) => d.status === 'delivered'), 'deliveries marked delivered');
  await new Promise((r) => setTimeout(r, 300));
  t.is(all.requests.length, 3);
  t.is(readOnly.requests.length, 1);
  t.is(inactive.requests.length, 0);
  t.is(foreign.requests.length, 0);
  t.deepEqual(await deliveriesOf(app, key, off.id), []);

  const listed = (await app.get('/v1/webhooks', key)).body.data;
  t.regex(listed[0].last_triggered_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.false('last_triggered_at' in listed[2]);
});

test('a deactivated webhook stops getting new deliveries and a reactivated one gets them again', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const receiver = await startReceiver(t);
  const key = await app.keyFor();
  const tenant = await tenantOf(app, key);
  const hook = await createWebhook(app, key, { url: receiver.url, events: ['email.received'] });

  t.is((await app.patch(`/v1/webhooks/${hook.id}`, key, { is_active: false })).status, 200);
  await recordEvents(app, tenant, [{ type: 'email.received', emailId: 1, mailboxId: 1 }]);
  t.is((await app.patch(`/v1/webhooks/${hook.id}`, key, { is_active: true })).status, 200);
  await recordEvents(app, tenant, [{ type: 'email.received', emailId: 2, mailboxId: 1 }]);
  const [r] = await receiver.waitForCount(1);
  t.is(r.body.data.email_id, 2);
  await new Promise((res) => setTimeout(res, 300));
  t.is(receiver.requests.length, 1);
});

test('a slow receiver does not hold up another webhook', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const slow = await startReceiver(t, { fallback: { hang: true } });
  const fast = await startReceiver(t);
  const key = await app.keyFor();
  const tenant = await tenantOf(app, key);
  await createWebhook(app, key, { url: slow.url, events: ['email.received'] });
  const other = await app.keyFor();
  await createWebhook(app, other, { url: fast.url, events: ['email.received'] });

  await recordEvents(app, tenant, Array.from({ length: PER_WEBHOOK_CONCURRENCY + 30 }, (_, i) => ({ type: 'email.received' as const, emailId: i + 1, mailboxId: 1 })));
  await slow.waitForCount(PER_WEBHOOK_CONCURRENCY);
  await recordEvents(app, await tenantOf(app, other), Array.from({ length: 20 }, (_, i) => ({ type: 'email.received' as const, emailId: i + 1, mailboxId: 2 })));
  await fast.waitForCount(20, 10_000);
  // The slow one is held to its own bound of concurrent requests.
  t.is(slow.maxConcurrent(), PER_WEBHOOK_CONCURRENCY);
  t.is(fast.requests.length, 20);
});

test('the deliveries list pages newest first and filters by status', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const receiver = await startReceiver(t);
  const key = await app.keyFor();
  const hook = await createWebhook(app, key, { url: receiver.url, events: ['email.received'] });
  await recordEvents(app, await tenantOf(app, key), [1, 2, 3].map((n) => ({ type: 'email.received' as const, emailId: n, mailboxId: 1 })));
  await receiver.waitForCount(3);
  await waitFor(async () => (await deliveriesOf(app, key, hook.id)).every((d) => d.status === 'delivered'), 'three delivered');

  const first = await app.get(`/v1/webhooks/${hook.id}/deliveries?per_page=2`, key);
  t.is(first.status, 200);
  t.deepEqual(first.body.data.map((d: any) => d.email_id), [3, 2]);
  t.deepEqual(Object.keys(first.body.data[0]).sort(), ['attempts', 'created_at', 'delivered_at', 'email_id', 'event', 'id', 'last_attempt_at', 'mailbox_id', 'next_attempt_at', 'recent_attempts', 'status']);
  t.deepEqual(Object.keys(first.body.data[0].recent_attempts[0]).sort(), ['attempt', 'attempted_at', 'error', 'latency_ms', 'status_code']);
  t.deepEqual(first.body.meta, { next_cursor: String(first.body.data[1].id), per_page: 2 });
  const second = await app.get(`/v1/webhooks/${hook.id}/deliveries?per_page=2&cursor=${first.body.meta.next_cursor}`, key);
  t.deepEqual(second.body.data.map((d: any) => d.email_id), [1]);
  t.is(second.body.meta.next_cursor, null);
  t.deepEqual((await app.get(`/v1/webhooks/${hook.id}/deliveries?status=failed`, key)).body.data, []);
  t.is((await app.get(`/v1/webhooks/${hook.id}/deliveries?status=done`, key)).status, 422);
  t.is((await app.get(`/v1/webhooks/${hook.id}/deliveries?per_page=0`, key)).status, 422);
});

test('events are recorded only for a tenant with an active webhook subscribed to them; one created later gets what follows', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const key = await app.keyFor();
  const tenant = await tenantOf(app, key);
  const other = await app.keyFor();
  const foreign = await startReceiver(t);
  await createWebhook(app, other, { url: foreign.url, events: ['email.received', 'email.read', 'email.deleted'] });
  const receiver = await startReceiver(t);
  const readOnly = await createWebhook(app, key, { url: receiver.url, events: ['email.read'], is_active: false });
  const events = () => app.app.db.selectFrom('events').select(['tenant_id', 'type', 'email_id']).orderBy('id').execute();

  // No webhook of this tenant is active: nothing to deliver, so nothing is recorded.
  t.deepEqual(await recordEvents(app, tenant, [{ type: 'email.received', emailId: 1, mailboxId: 3 }, { type: 'email.read', emailId: 1, mailboxId: 3 }]), []);
  t.deepEqual(await events(), []);

  // Active, but subscribed to email.read only: just that event.
  t.is((await app.patch(`/v1/webhooks/${readOnly.id}`, key, { is_active: true })).status, 200);
  const ids = await recordEvents(app, tenant, [
    { type: 'email.received', emailId: 2, mailboxId: 3 }, { type: 'email.read', emailId: 2, mailboxId: 3 }, { type: 'email.deleted', emailId: 2, mailboxId: 3 },
  ]);
  t.is(ids.length, 1);
  t.deepEqual(await events(), [{ tenant_id: tenant, type: 'email.read', email_id: 2 }]);
  const [got] = await receiver.waitForCount(1);
  t.deepEqual(got.body.data, { email_id: 2, mailbox_id: 3 });
  await new Promise((r) => setTimeout(r, 300));
  t.is(receiver.requests.length, 1, 'the email before the webhook was active is not delivered');
  t.is(foreign.requests.length, 0, "another tenant's webhook hears nothing of this tenant");
});
