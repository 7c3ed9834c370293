import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { startTestApp } from '../helpers/app.js';
import { capturedLogger } from '../helpers/logs.js';
import { setAsideOperator } from '../helpers/set-aside.js';
import { onPostgres } from '../helpers/pg.js';
import { deliver, makeInbox } from '../helpers/emails.js';
import { createWebhook, PRIVATE_HOOKS, startReceiver, waitFor } from '../helpers/webhooks.js';

/**
 * A delivery whose stored row is bad (an event type no receiver may be sent) among five good ones,
 * left to be set aside: the receiver refuses the first request, so that delivery waits in the queue
 * for its retry, and its row is spoilt meanwhile.
 */
async function spoiltDelivery(t: ExecutionContext) {
  const logs = capturedLogger('info');
  const app = await startTestApp(t, { env: PRIVATE_HOOKS, logger: logs.logger });
  const receiver = await startReceiver(t, { script: [{ status: 500 }] });
  const box = await makeInbox(app);
  const hook = await createWebhook(app, box.key, { url: receiver.url, events: ['email.received'] });
  const rows = () => app.app.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).orderBy('id').execute();

  await deliver(app, box.key, box.address);
  const [first] = (await waitFor(async () => {
    const r = await rows();
    return r.length === 1 && r[0]!.status === 'queued' && r[0]!.attempts === 1 ? r : null;
  }, 'the first delivery waiting for its retry', 30_000))!;
  await app.app.db.updateTable('webhook_deliveries').set({ event_type: 'email.exploded\r\nx-injected: 1' }).where('id', '=', first!.id).execute();

  for (let i = 0; i < 5; i++) await deliver(app, box.key, box.address);
  await receiver.waitForCount(6, 30_000);
  const bad = (await waitFor(async () => {
    const r = (await rows()).find((d) => d.id === first!.id)!;
    return r.status === 'failed' ? r : null;
  }, 'the bad delivery set aside', 30_000))!;
  const op = await setAsideOperator(app, 'webhooks', 'mailstead_webhook_deliveries_set_aside');
  return { app, logs, receiver, box, hook, rows, bad, op };
}

test('a delivery whose stored row is bad is retried alone, then set aside, while the other deliveries go out; once mended, a retry sends it', async (t) => {
  const { app, logs, receiver, box, hook, rows, bad, op } = await spoiltDelivery(t);
  t.is(bad.next_attempt_at, null);
  const all = await rows();
  t.deepEqual(all.filter((d) => d.id !== bad.id).map((d) => d.status), ['delivered', 'delivered', 'delivered', 'delivered', 'delivered']);
  // The receiver never saw the bad row; its log tells why it was set aside, after its few tries.
  t.true(receiver.requests.every((r) => r.headers['x-webhook-event'] === 'email.received'));
  const attempts = await app.app.db.selectFrom('webhook_attempts').select(['error']).where('delivery_id', '=', bad.id).orderBy('id').execute();
  t.regex(attempts.at(-1)!.error!, /^set aside: unknown event type/);
  t.is(attempts.filter((a) => a.error?.startsWith('local error: ')).length, 2);
  t.is(await op.gauge(), 1);

  // The operator sees it: a log line with the reason, and the admin list (not the tenants').
  const line = logs.records().find((l) => l.msg === 'webhook deliveries that could not be sent were set aside (failed)')!;
  t.is(line.set_aside.length, 1);
  t.is(line.set_aside[0].delivery_id, bad.id);
  t.regex(line.set_aside[0].reason, /unknown event type/);
  t.is((await app.get(op.path, box.key)).status, 403);
  const [listed] = await op.list();
  t.like(listed, { id: bad.id, webhook_id: hook.id, email_id: bad.email_id, attempts: bad.attempts });
  t.regex(listed.reason, /^set aside: unknown event type/);
  const cliList = await op.cli('list');
  t.is(cliList.code, 0, cliList.stderr);
  t.deepEqual(JSON.parse(cliList.stdout).map((d: any) => d.id), [bad.id]);

  // Its row mended, a retry from the CLI sends it (the engine hears of it by NOTIFY on PostgreSQL,
  // at its minute look at the queue on SQLite).
  await app.app.db.updateTable('webhook_deliveries').set({ event_type: 'email.received' }).where('id', '=', bad.id).execute();
  const retried = await op.cli('retry', String(bad.id));
  t.is(retried.code, 0, retried.stderr);
  t.is(retried.stdout, 'queued\n');
  if (!onPostgres) await app.app.cron.run('webhooks.sweep');
  await receiver.waitForCount(7, 30_000);
  await waitFor(async () => (await rows()).find((d) => d.id === bad.id)!.status === 'delivered', 'the retried delivery delivered', 30_000);
  t.deepEqual(await op.list(), []);
  t.is(await op.gauge(), 0);
  t.is((await app.post(`${op.path}/${bad.id}/retry`, op.admin)).status, 404, 'no longer set aside');
});

test('an administrator discards a set-aside delivery with its attempt log', async (t) => {
  const { app, box, rows, bad, op } = await spoiltDelivery(t);
  t.is((await app.del(`${op.path}/${bad.id}`, box.key)).status, 403);
  t.is((await app.del(`${op.path}/${bad.id}`, op.admin)).status, 200);
  t.false((await rows()).some((d) => d.id === bad.id));
  t.is((await app.app.db.selectFrom('webhook_attempts').select('id').where('delivery_id', '=', bad.id).execute()).length, 0);
  t.is(await op.gauge(), 0);
  t.is((await app.del(`${op.path}/${bad.id}`, op.admin)).status, 404);
  const again = await op.cli('discard', String(bad.id));
  t.is(again.code, 2);
  t.regex(again.stderr, /nothing set aside in webhooks with id/);
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
