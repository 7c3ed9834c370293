import test from 'ava';
import { SET_ASIDE_ERROR } from '../../src/tasks/queue.js';
import { startTestApp } from '../helpers/app.js';
import { capturedLogger } from '../helpers/logs.js';
import { onPostgres } from '../helpers/pg.js';
import { setAsideOperator } from '../helpers/set-aside.js';
import { TASK_WAIT_MS, createMailbox, domain, whoIs } from '../helpers/mailboxes.js';

const until = async (check: () => Promise<boolean>, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

const BAD_ROWS = 6; // more than the provisioning lane's 4 slots, which a task that could not be read used to keep for good

test('tasks whose stored payload is broken are retried alone and set aside while the other tasks run; the operator lists, retries and discards them', async (t) => {
  const logs = capturedLogger('info');
  const app = await startTestApp(t, { logger: logs.logger });
  const key = await app.keyFor();
  await domain(app, key, 'poison.example');
  const { tenantId, keyId } = await whoIs(app, key);
  const now = Date.now();
  // Mailbox tasks as the API stores them, but their JSON cut short: bad data in the row itself.
  const bad: number[] = [];
  for (let i = 0; i < BAD_ROWS; i++) {
    const row = await app.app.db.insertInto('tasks').values({
      kind: 'mailbox.single', tenant_id: tenantId, key_id: keyId, domain: 'poison.example', status: 'queued',
      payload: `{"address":"broken${i}@poison.example","domainId":`, total_email: 0, run_after: now - 1000, created_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    bad.push(row.id);
  }
  // Mailboxes created through the API afterwards (their enqueue wakes the worker) are all made.
  for (let i = 0; i < 5; i++) {
    const done = await createMailbox(app, key, 'poison.example', `good${i}@poison.example`, 'correct horse');
    t.is(done.body.status, 'completed', JSON.stringify(done.body));
  }
  // The broken ones end failed after their few tries, and their poll says so (not a 500).
  await until(async () => {
    const rows = await app.app.db.selectFrom('tasks').select(['status']).where('id', 'in', bad).execute();
    return rows.every((r) => r.status === 'failed');
  }, TASK_WAIT_MS);
  const rows = await app.app.db.selectFrom('tasks').select(['error', 'attempts']).where('id', 'in', bad).execute();
  for (const r of rows) {
    t.is(r.error, SET_ASIDE_ERROR);
    t.is(r.attempts, 3);
  }
  const poll = await app.get(`/v1/get/mailbox/single?task_id=${bad[0]}`, key);
  t.is(poll.status, 422);
  const metrics = await (await fetch(`http://127.0.0.1:${app.httpPort}/metrics`)).text();
  t.regex(metrics, new RegExp(`^mailstead_tasks_set_aside ${BAD_ROWS}$`, 'm'));
  // The queue still runs afterwards.
  t.is((await createMailbox(app, key, 'poison.example', 'after@poison.example', 'correct horse')).body.status, 'completed');

  // The operator sees them: one log line each, with the reason.
  const lines = logs.records().filter((l) => l.msg === 'task failed after retries; set aside');
  t.deepEqual(lines.map((l) => l.task_id).sort((a, b) => a - b), bad);
  for (const l of lines) t.regex(l.err.message, /JSON/);
  // The admin list (not the tenants'), without payloads: a mailbox task carries its password.
  const op = await setAsideOperator(app, 'tasks', 'mailstead_tasks_set_aside');
  t.is((await app.get(op.path, key)).status, 403);
  const listed = await op.list();
  t.deepEqual(listed.map((r) => r.id), bad);
  t.like(listed[0], { kind: 'mailbox.single', tenant_id: tenantId, domain: 'poison.example', attempts: 3, reason: SET_ASIDE_ERROR });
  t.regex(listed[0].set_aside_at, /^\d{4}-\d\d-\d\dT/);
  t.false('payload' in listed[0]);
  const cliList = await op.cli('list');
  t.is(cliList.code, 0, cliList.stderr);
  t.deepEqual(JSON.parse(cliList.stdout).map((r: any) => r.id), bad);

  // Its payload mended, a retry through the API runs the first: its mailbox is made.
  const domainId = (await app.app.db.selectFrom('domains').select('id').where('hostname', '=', 'poison.example').executeTakeFirstOrThrow()).id;
  await app.app.db.updateTable('tasks').set({ payload: JSON.stringify({ address: 'mended@poison.example', domainId, password: 0 }) }).where('id', '=', bad[0]!).execute();
  t.is((await app.post(`${op.path}/${bad[0]}/retry`, op.admin)).status, 200);
  await until(async () => (await app.get(`/v1/get/mailbox/single?task_id=${bad[0]}`, key)).body.status === 'completed', TASK_WAIT_MS);
  // A retry from the CLI gives the second one more try (the server hears of it by NOTIFY on PostgreSQL,
  // at its minute look at the queue on SQLite); still broken, it is set aside again.
  const retried = await op.cli('retry', String(bad[1]));
  t.is(retried.code, 0, retried.stderr);
  t.is(retried.stdout, 'queued\n');
  await until(async () => {
    if (!onPostgres) await app.app.cron.run('tasks.recover');
    const row = await app.app.db.selectFrom('tasks').select(['status', 'attempts']).where('id', '=', bad[1]!).executeTakeFirstOrThrow();
    return row.status === 'failed' && row.attempts === 4;
  }, TASK_WAIT_MS);
  // A discard deletes the third: its poll is a 404.
  const discarded = await op.cli('discard', String(bad[2]));
  t.is(discarded.code, 0, discarded.stderr);
  t.is(discarded.stdout, 'discarded\n');
  t.is((await app.get(`/v1/get/mailbox/single?task_id=${bad[2]}`, key)).status, 404);
  t.is((await app.del(`${op.path}/${bad[2]}`, op.admin)).status, 404);
  const again = await op.cli('discard', String(bad[2]));
  t.is(again.code, 2);
  t.regex(again.stderr, /nothing set aside in tasks with id/);
  t.deepEqual((await op.list()).map((r) => r.id), bad.filter((id) => id !== bad[0] && id !== bad[2]));
  t.is(await op.gauge(), BAD_ROWS - 2);
});
