import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { REDACTION_JOB } from '../../src/mailboxes/index.js';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, bulkMailboxes, createMailbox, domain } from '../helpers/mailboxes.js';

const DAY = 24 * 60 * 60 * 1000;

test('plain passwords in task results and payloads are redacted 24 hours after completion', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { clock });
  const key = await app.keyFor();
  await domain(app, key, 'red.example');
  const single = await createMailbox(app, key, 'red.example', 'ann@red.example', 'chosen password');
  const bulk = await bulkMailboxes(app, key, 'red.example', 'Bob Jones', 2, 0);
  const bulkPasswords = Object.values(bulk.body.results).map((e: any) => e.password);
  t.true(bulkPasswords.every((p) => /^[A-Za-z0-9_-]{24}$/.test(p)));

  clock.advance(DAY - 1000);
  t.is(await app.app.mailboxes.sweepPasswords(), 0);
  const before = await app.get(`/v1/get/mailbox/single?task_id=${single.body.Task_id}`, key);
  t.is(before.body.results['ann@red.example'].password, 'chosen password');

  clock.advance(1000);
  await app.app.cron.run(REDACTION_JOB);
  const after = await app.get(`/v1/get/mailbox/single?task_id=${single.body.Task_id}`, key);
  t.deepEqual(after.body.results['ann@red.example'], { ...before.body.results['ann@red.example'], password: '[redacted]' });
  const bulkAfter = await app.get(`/v1/get/mailbox/bulk?task_id=${bulk.body.Task_id}`, key);
  t.deepEqual(Object.values(bulkAfter.body.results), [
    { status: 'Created successfully.', password: '[redacted]' },
    { status: 'Created successfully.', password: '[redacted]' },
  ]);
  t.is(bulkAfter.body.total_email, 2);

  // Nothing of the passwords is left anywhere in the task rows.
  const rows = await app.app.db.selectFrom('tasks').select(['payload', 'result']).execute();
  const text = JSON.stringify(rows);
  for (const secret of ['chosen password', ...bulkPasswords]) t.false(text.includes(secret));
  t.is(await app.app.mailboxes.sweepPasswords(), 0);
});

test('a failed create task has its payload password redacted too', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { clock });
  const key = await app.keyFor();
  await domain(app, key, 'fail.example', { total_mailbox_allowed: 1 });
  await createMailbox(app, key, 'fail.example', 'a@fail.example');
  const k = (await app.app.tenants.authenticate(key))!;
  const domainId = (await app.app.domains.store.byHostname(app.app.db, 'fail.example'))!.id;
  const taskId = await app.app.db.transaction().execute(async (trx) => {
    const id = await app.app.queue.enqueue(trx, { kind: 'mailbox.single', tenantId: k.tenantId, keyId: k.id, domain: 'fail.example', payload: { domainId, address: 'b@fail.example', displayName: '', password: 'secret password' } });
    await app.app.mailboxes.store.markForRedaction(trx, id);
    return id;
  });
  t.is((await app.pollTask('/v1/get/mailbox/single', key, taskId, TASK_WAIT_MS)).status, 422);
  clock.advance(DAY);
  t.is(await app.app.mailboxes.sweepPasswords(), 2);
  t.deepEqual((await app.app.queue.get(taskId))!.payload.password, '[redacted]');
});
