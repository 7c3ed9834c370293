import test from 'ava';
import { sql } from 'kysely';
import { manualClock } from '../../src/clock.js';
import { ApiError, unprocessable } from '../../src/errors.js';
import { SYSTEM_TASK_RETENTION_MS } from '../../src/tasks/cron.js';
import { pollTask, taskEnvelope } from '../../src/tasks/poll.js';
import { startTestApp } from '../helpers/app.js';

const until = async (check: () => Promise<boolean>, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('lifecycle: queued, then running, then completed, with the outcome stored', async (t) => {
  const app = await startTestApp(t);
  const { queue, db } = app.app;
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  queue.register({ kind: 'test.gated', prepare: () => gate, run: async () => ({ totalEmail: 3, results: { ok: true } }) });
  const id = await db.transaction().execute((trx) => queue.enqueue(trx, { kind: 'test.gated', tenantId: null, keyId: null, domain: 'x.example' }));
  await until(async () => (await queue.get(id))!.status === 'running');
  t.deepEqual(taskEnvelope((await queue.get(id))!), { Task_id: id, task_id: String(id), status: 'running', total_email: 0, domain: 'x.example', results: [] });
  release();
  await until(async () => (await queue.get(id))!.status === 'completed');
  const done = (await queue.get(id))!;
  t.deepEqual(taskEnvelope(done), { Task_id: id, task_id: String(id), status: 'completed', total_email: 3, domain: 'x.example', results: { ok: true } });
});

test('a task enqueued in a transaction that rolls back never runs', async (t) => {
  const app = await startTestApp(t);
  const { queue, db } = app.app;
  let ran = 0;
  queue.register({ kind: 'test.count', run: async () => { ran++; return { results: [] }; } });
  await t.throwsAsync(db.transaction().execute(async (trx) => {
    await queue.enqueue(trx, { kind: 'test.count', tenantId: null, keyId: null });
    throw new Error('request failed after enqueue');
  }));
  const kept = await db.transaction().execute((trx) => queue.enqueue(trx, { kind: 'test.count', tenantId: null, keyId: null }));
  await until(async () => (await queue.get(kept))!.status === 'completed');
  t.is(ran, 1);
  const rows = await db.selectFrom('tasks').select('id').where('kind', '=', 'test.count').execute();
  t.is(rows.length, 1);
});

test('the worker wakes on enqueue and runs tasks concurrently', async (t) => {
  const app = await startTestApp(t);
  const { queue, db } = app.app;
  let active = 0;
  let peak = 0;
  // Each task holds its slot until two are running together (or 20 s pass, and the peak shows it).
  let release!: () => void;
  const allIn = new Promise<void>((r) => { release = r; });
  const gate = Promise.race([allIn, new Promise<void>((r) => setTimeout(r, 20_000).unref())]);
  queue.register({
    kind: 'test.slow',
    prepare: async () => { active++; peak = Math.max(peak, active); if (active === 2) release(); await gate; active--; },
    run: async () => ({ results: [] }),
  });
  const ids = await db.transaction().execute(async (trx) => {
    const out = [];
    for (let i = 0; i < 4; i++) out.push(await queue.enqueue(trx, { kind: 'test.slow', tenantId: null, keyId: null }));
    return out;
  });
  await until(async () => (await Promise.all(ids.map((id) => queue.get(id)))).every((x) => x!.status === 'completed'));
  t.true(peak >= 2, `peak concurrency ${peak}`);
});

test('an ApiError fails the task with its reason; the poll answers 422 with it', async (t) => {
  const app = await startTestApp(t);
  const { queue, db } = app.app;
  queue.register({ kind: 'test.fail', run: async () => { throw unprocessable('Address already taken'); } });
  const key = await app.app.tenants.authenticate(await app.keyFor());
  const id = await db.transaction().execute((trx) => queue.enqueue(trx, { kind: 'test.fail', tenantId: key!.tenantId, keyId: key!.id }));
  await until(async () => (await queue.get(id))!.status === 'failed');
  const err = await t.throwsAsync(pollTask(queue, key!, id, ['test.fail']));
  t.true(err instanceof ApiError);
  t.is((err as ApiError).status, 422);
  t.is((err as ApiError).reason, 'Address already taken');
});

test('an unexpected error is retried, then succeeds', async (t) => {
  const app = await startTestApp(t);
  const { queue, db } = app.app;
  let calls = 0;
  queue.register({ kind: 'test.flaky', attempts: 3, run: async () => { if (++calls === 1) throw new Error('transient'); return { results: { calls } }; } });
  const id = await db.transaction().execute((trx) => queue.enqueue(trx, { kind: 'test.flaky', tenantId: null, keyId: null }));
  await until(async () => (await queue.get(id))!.status === 'completed', 15_000);
  t.deepEqual((await queue.get(id))!.results, { calls: 2 });
});

test('a restart finds a task a crash left running and finishes it', async (t) => {
  const first = await startTestApp(t);
  const key = await first.keyFor();
  const r = await first.post('/v1/create/domain', key, { Domain: 'crash.example' });
  await first.pollTask('/v1/get/domain', key, r.body.task_id);
  // Put the database in the state a crash mid-task leaves: running, no outcome, no records yet.
  await sql`UPDATE tasks SET status = 'running', result = NULL, finished_at = NULL WHERE id = ${r.body.task_id}`.execute(first.app.db);
  await sql`DELETE FROM dns_records`.execute(first.app.db);
  await first.stop();

  const second = await startTestApp(t, { dataDir: first.dataDir });
  const task = await second.pollTask('/v1/get/domain', key, r.body.task_id);
  t.is(task.body.status, 'completed');
  t.is(task.body.results.records.length, 11);
  const rows = await second.app.db.selectFrom('dns_records').select('id').execute();
  t.is(rows.length, 11, 'the rerun stored the records once');
});

test('old finished system tasks are pruned; client tasks stay pollable', async (t) => {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const app = await startTestApp(t, { clock });
  const { queue, db } = app.app;
  queue.register({ kind: 'test.system', run: async () => ({ results: [] }) });
  const key = await app.keyFor();
  const clientTask = (await app.post('/v1/create/domain', key, { Domain: 'keep.example' })).body.task_id;
  await app.pollTask('/v1/get/domain', key, clientTask);
  const systemTask = await db.transaction().execute((trx) => queue.enqueue(trx, { kind: 'test.system', tenantId: null, keyId: null }));
  await until(async () => (await queue.get(systemTask))!.status === 'completed');
  t.is(await queue.pruneSystemTasks(SYSTEM_TASK_RETENTION_MS), 0, 'too young');
  clock.advance(SYSTEM_TASK_RETENTION_MS + 1);
  // The domain's first DNS check is a system task too, and it may have finished by now as well.
  t.true(await queue.pruneSystemTasks(SYSTEM_TASK_RETENTION_MS) >= 1);
  t.is(await queue.get(systemTask), undefined);
  t.is((await app.get(`/v1/get/domain?task_id=${clientTask}`, key)).body.status, 'completed');
});

test('a lane whose slots are all held does not hold up tasks of another lane', async (t) => {
  const app = await startTestApp(t);
  const { queue, db } = app.app;
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  let started = 0;
  queue.register({ kind: 'test.slow', lane: 'slow', prepare: () => { started++; return gate; }, run: async () => ({ results: [] }) });
  queue.register({ kind: 'test.quick', run: async () => ({ results: { quick: true } }) });
  const enqueue = (kind: string) => db.transaction().execute((trx) => queue.enqueue(trx, { kind, tenantId: null, keyId: null }));
  // More slow tasks than any lane has slots (4 by default for a lane without its own count).
  const slow = [];
  for (let i = 0; i < 6; i++) slow.push(await enqueue('test.slow'));
  await until(async () => started === 4);
  const quick = await enqueue('test.quick');
  await until(async () => (await queue.get(quick))!.status === 'completed');
  t.is(started, 4, 'the slow lane still runs only its own four');
  t.is((await queue.get(slow[5]))!.status, 'queued');
  release();
  for (const id of slow) await until(async () => (await queue.get(id))!.status === 'completed');
  t.is(started, 6);
});
