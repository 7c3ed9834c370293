import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';
import { createWebhook, hexSignatureMatches, startReceiver } from '../helpers/webhooks.js';

test('inbound, read and delete through the API each reach the webhook, signed', async (t) => {
  const app = await startTestApp(t, { env: { MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const receiver = await startReceiver(t);
  const box = await makeInbox(app);
  const hook = await createWebhook(app, box.key, { url: receiver.url, events: ['email.received', 'email.read', 'email.deleted'] });

  await deliver(app, box.key, box.address);
  const [email] = await waitForEmails(app, box.key, 1);
  const [received] = await receiver.waitForCount(1);
  t.is(received.headers['x-webhook-event'], 'email.received');
  // email.received also says where delivery filed the message and the spam verdict (DECISIONS.md section 18).
  t.deepEqual(received.body.data, { email_id: email.id, mailbox_id: box.mailboxId, folder: 'INBOX', spam_verdict: 'ham' });

  t.is((await app.post(`/v1/emails/${email.id}/read`, box.key)).status, 200);
  const read = (await receiver.waitForCount(2))[1];
  t.is(read.headers['x-webhook-event'], 'email.read');
  t.deepEqual(read.body.data, { email_id: email.id, mailbox_id: box.mailboxId });
  // Marking it read again changes nothing, so it announces nothing.
  t.is((await app.post(`/v1/emails/${email.id}/read`, box.key)).status, 200);

  t.is((await app.del(`/v1/emails/${email.id}`, box.key)).status, 200);
  const deleted = (await receiver.waitForCount(3))[2];
  t.is(deleted.headers['x-webhook-event'], 'email.deleted');
  t.deepEqual(deleted.body.data, { email_id: email.id, mailbox_id: box.mailboxId });

  for (const r of receiver.requests) {
    t.deepEqual(hexSignatureMatches(hook.secret, r), [true]);
    t.deepEqual(Object.keys(r.body), ['event', 'timestamp', 'data']);
  }
  await new Promise((r) => setTimeout(r, 300));
  t.deepEqual(receiver.requests.map((r) => r.headers['x-webhook-event']), ['email.received', 'email.read', 'email.deleted']);
});
