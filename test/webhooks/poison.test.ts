import test from 'ava';
import { sql } from 'kysely';
import { startTestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/pg.js';
import { deliver, makeInbox } from '../helpers/emails.js';
import { createWebhook, PRIVATE_HOOKS, startReceiver, waitFor } from '../helpers/webhooks.js';

const metric = async (port: number, name: string) => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
};

test('a delivery whose stored row is bad is retried alone, then set aside, while the other deliveries go out', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  // The first request is refused, so that delivery waits in the queue for its retry.
  const receiver = await startReceiver(t, { script: [{ status: 500 }] });
  const box = await makeInbox(app);
  const hook = await createWebhook(app, box.key, { url: receiver.url, events: ['email.received'] });
  const rows = () => app.app.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).orderBy('id').execute();

  await deliver(app, box.key, box.address);
  const [first] = (await waitFor(async () => {
    const r = await rows();
    return r.length === 1 && r[0]!.status === 'queued' && r[0]!.attempts === 1 ? r : null;
  }, 'the first delivery waiting for its retry', 30_000))!;
  // Bad data in the row itself: an event type no receiver may be sent.
  await app.app.db.updateTable('webhook_deliveries').set({ event_type: 'email.exploded\r\nx-injected: 1' }).where('id', '=', first!.id).execute();

  for (let i = 0; i < 5; i++) await deliver(app, box.key, box.address);
  await receiver.waitForCount(6, 30_000);
  const bad = (await waitFor(async () => {
    const r = (await rows()).find((d) => d.id === first!.id)!;
    return r.status === 'failed' ? r : null;
  }, 'the bad delivery set aside', 30_000))!;
  t.is(bad.next_attempt_at, null);

  const all = await rows();
  t.deepEqual(all.filter((d) => d.id !== first!.id).map((d) => d.status), ['delivered', 'delivered', 'delivered', 'delivered', 'delivered']);
  // The receiver never saw the bad row; its log tells why it was set aside, after its few tries.
  t.true(receiver.requests.every((r) => r.headers['x-webhook-event'] === 'email.received'));
  const attempts = await app.app.db.selectFrom('webhook_attempts').select(['error']).where('delivery_id', '=', first!.id).orderBy('id').execute();
  t.regex(attempts.at(-1)!.error!, /^set aside: unknown event type/);
  t.is(attempts.filter((a) => a.error?.startsWith('local error: ')).length, 2);
  t.is(await metric(app.httpPort, 'mailstead_webhook_deliveries_set_aside'), 1);
});

test('a receiver answering with NUL bytes is logged and retried alone; another webhook of the same events is served', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  const hostile = await startReceiver(t, { fallback: { status: 500, body: 'broken\u0000\u0000answer\ud800' } });
  const good = await startReceiver(t);
  const box = await makeInbox(app);
  const bad = await createWebhook(app, box.key, { url: hostile.url, events: ['email.received'] });
  await createWebhook(app, box.key, { url: good.url, events: ['email.received'] });

  for (let i = 0; i < 4; i++) await deliver(app, box.key, box.address);
  await good.waitForCount(4, 30_000);
  await hostile.waitForCount(4, 30_000);
  // Each of the hostile receiver's deliveries has its attempt written (NUL as U+FFFD) and waits for its own retry.
  const queued = (await waitFor(async () => {
    const r = await app.app.db.selectFrom('webhook_deliveries').select(['id', 'status', 'attempts']).where('webhook_id', '=', bad.id).execute();
    return r.length === 4 && r.every((d) => d.status === 'queued' && d.attempts === 1) ? r : null;
  }, 'the hostile receiver\'s deliveries queued for retry', 30_000))!;
  const errors = await app.app.db.selectFrom('webhook_attempts').select('error').where('delivery_id', 'in', queued.map((d) => d.id)).execute();
  t.is(errors.length, 4);
  for (const e of errors) t.is(e.error, 'HTTP 500: broken\ufffd\ufffdanswer\ufffd');
  // The engine still writes and claims: one more event reaches the good receiver.
  await deliver(app, box.key, box.address);
  await good.waitForCount(5, 30_000);
  t.pass();
});

test('a delivery whose outcome cannot be written is set aside after its own few tries; the outcomes written with it are kept', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  const receiver = await startReceiver(t);
  const box = await makeInbox(app, { count: 2 });
  const hook = await createWebhook(app, box.key, { url: receiver.url, events: ['email.received'] });
  const refused = box.mailboxes[1]!.id;
  // The database itself refuses every attempt row of the second mailbox's deliveries: a write that fails for one row.
  if (onPostgres) {
    await sql.raw(`CREATE FUNCTION refuse_attempt() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF (SELECT mailbox_id FROM webhook_deliveries WHERE id = NEW.delivery_id) = ${refused} THEN RAISE EXCEPTION 'attempt refused'; END IF;
      RETURN NEW; END $$`).execute(app.app.db);
    await sql.raw('CREATE TRIGGER refuse_attempt BEFORE INSERT ON webhook_attempts FOR EACH ROW EXECUTE FUNCTION refuse_attempt()').execute(app.app.db);
  } else {
    await sql.raw(`CREATE TRIGGER refuse_attempt BEFORE INSERT ON webhook_attempts
      WHEN (SELECT mailbox_id FROM webhook_deliveries WHERE id = NEW.delivery_id) = ${refused}
      BEGIN SELECT RAISE(ABORT, 'attempt refused'); END`).execute(app.app.db);
  }
  await deliver(app, box.key, box.mailboxes[1]!.address);
  for (let i = 0; i < 4; i++) await deliver(app, box.key, box.address);
  await receiver.waitForCount(5, 30_000);
  const rows = (await waitFor(async () => {
    const r = await app.app.db.selectFrom('webhook_deliveries').select(['mailbox_id', 'status']).where('webhook_id', '=', hook.id).execute();
    return r.length === 5 && r.every((d) => d.status !== 'queued' && d.status !== 'sending') ? r : null;
  }, 'every delivery settled', 30_000))!;
  t.deepEqual(rows.filter((d) => d.mailbox_id === refused).map((d) => d.status), ['failed']);
  t.deepEqual(rows.filter((d) => d.mailbox_id !== refused).map((d) => d.status), ['delivered', 'delivered', 'delivered', 'delivered']);
  // Sent once: its outcome, not the request, was what failed.
  t.is(receiver.requests.filter((r) => r.body?.data?.mailbox_id === refused).length, 1);
  // The engine goes on.
  await deliver(app, box.key, box.address);
  await receiver.waitForCount(6, 30_000);
});
