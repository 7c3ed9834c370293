import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { manualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createWebhook, hexSignatureMatches, recordEvents, startReceiver, tenantOf } from '../helpers/webhooks.js';

const PRIVATE_OK = { MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' };

test('a delivery carries the exact signed body, both signature schemes and the delivery headers', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const receiver = await startReceiver(t);
  const key = await app.keyFor();
  const hook = await createWebhook(app, key, { url: receiver.url, events: ['email.received'] });
  const before = Math.floor(Date.now() / 1000);
  await recordEvents(app, await tenantOf(app, key), [{ type: 'email.received', emailId: 41, mailboxId: 7 }]);
  const [r] = await receiver.waitForCount(1);

  t.is(r.method, 'POST');
  t.is(r.path, '/hook');
  t.is(r.headers['content-type'], 'application/json');
  t.regex(String(r.headers['user-agent']), /^Mailstead-Webhooks\//);
  t.is(r.headers['x-webhook-event'], 'email.received');
  t.regex(String(r.headers['x-webhook-id']), /^\d+$/);
  t.is(r.headers['webhook-id'], r.headers['x-webhook-id']);
  t.is(r.headers['webhook-timestamp'], r.headers['x-webhook-timestamp']);
  const ts = Number(r.headers['x-webhook-timestamp']);
  t.true(ts >= before - 1 && ts <= Math.floor(Date.now() / 1000) + 1);
  t.deepEqual(r.body, { event: 'email.received', timestamp: r.body.timestamp, data: { email_id: 41, mailbox_id: 7, folder: 'INBOX', spam_verdict: null } });
  t.true(Number.isInteger(r.body.timestamp) && r.body.timestamp >= before - 1);

  // SPEC.md's signature, recomputed independently over the raw bytes received.
  t.deepEqual(hexSignatureMatches(hook.secret, r), [true]);
  t.deepEqual(hexSignatureMatches('0'.repeat(64), r), [false]);

  // Standard Webhooks, verified by the standardwebhooks package in both of its key conventions.
  const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
  t.deepEqual(new Webhook(hook.secret, { format: 'raw' }).verify(r.raw.toString('utf8'), headers), r.body);
  t.deepEqual(new Webhook('whsec_' + Buffer.from(hook.secret).toString('base64')).verify(r.raw.toString('utf8'), headers), r.body);
  t.throws(() => new Webhook('0'.repeat(64), { format: 'raw' }).verify(r.raw.toString('utf8'), headers));
  // A changed byte fails both schemes.
  const tampered = { ...r, raw: Buffer.from(r.raw.toString('utf8').replace('41', '42')) };
  t.deepEqual(hexSignatureMatches(hook.secret, tampered), [false]);
  t.throws(() => new Webhook(hook.secret, { format: 'raw' }).verify(tampered.raw.toString('utf8'), headers));
});

test('after a secret rotation both secrets sign for 24 hours, then only the new one', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { env: PRIVATE_OK, clock });
  const receiver = await startReceiver(t);
  const key = await app.keyFor();
  const tenant = await tenantOf(app, key);
  const hook = await createWebhook(app, key, { url: receiver.url, events: ['email.read'] });

  const rot = await app.post(`/v1/webhooks/${hook.id}/rotate-secret`, key);
  t.is(rot.status, 200);
  t.is(rot.body.data.id, hook.id);
  t.regex(rot.body.data.secret, /^[0-9a-f]{64}$/);
  t.not(rot.body.data.secret, hook.secret);
  const fresh = rot.body.data.secret as string;

  await recordEvents(app, tenant, [{ type: 'email.read', emailId: 1, mailboxId: 2 }]);
  const [during] = await receiver.waitForCount(1);
  t.is(String(during.headers['x-webhook-signature']).split(' ').length, 2);
  t.deepEqual(hexSignatureMatches(fresh, during), [true, false]);
  t.deepEqual(hexSignatureMatches(hook.secret, during), [false, true]);
  const headers = { 'webhook-id': String(during.headers['webhook-id']), 'webhook-timestamp': String(during.headers['webhook-timestamp']), 'webhook-signature': String(during.headers['webhook-signature']) };
  t.notThrows(() => new Webhook(fresh, { format: 'raw' }).verify(during.raw.toString('utf8'), headers));
  t.notThrows(() => new Webhook(hook.secret, { format: 'raw' }).verify(during.raw.toString('utf8'), headers));

  clock.advance(24 * 3600e3 + 1000);
  await recordEvents(app, tenant, [{ type: 'email.read', emailId: 3, mailboxId: 2 }]);
  const after = (await receiver.waitForCount(2))[1];
  t.deepEqual(hexSignatureMatches(fresh, after), [true]);
  t.deepEqual(hexSignatureMatches(hook.secret, after), [false]);
  t.is(String(after.headers['webhook-signature']).split(' ').length, 1);
});
