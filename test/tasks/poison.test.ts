import test from 'ava';
import { SET_ASIDE_ERROR } from '../../src/tasks/queue.js';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, createMailbox, domain, whoIs } from '../helpers/mailboxes.js';

const until = async (check: () => Promise<boolean>, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

const BAD_ROWS = 6; // more than the provisioning lane's 4 slots, which a task that could not be read used to keep for good

test('tasks whose stored payload is broken are retried alone and set aside while the other tasks run', async (t) => {
  const app = await startTestApp(t);
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
});
