import test from 'ava';
import { startTestApp } from '../helpers/app.js';

// test/tasks/queue.test.ts tests that enqueued tasks run, concurrently; this checks that the worker
// wakes on enqueue rather than at a poll.
const AT_ONCE_MS = 1000;

test('the task worker wakes at once on enqueue', async (t) => {
  const app = await startTestApp(t);
  const { queue, db } = app.app;
  let startedAt = 0;
  let ran!: () => void;
  const running = new Promise<void>((r) => { ran = r; });
  queue.register({ kind: 'test.wake', run: async () => { startedAt = performance.now(); ran(); return { results: [] }; } });
  const enqueued = performance.now();
  await db.transaction().execute((trx) => queue.enqueue(trx, { kind: 'test.wake', tenantId: null, keyId: null }));
  await Promise.race([running, new Promise((r) => setTimeout(r, 30_000).unref())]);
  t.true(startedAt > 0, 'the task ran');
  t.true(startedAt - enqueued < AT_ONCE_MS, `started ${Math.round(startedAt - enqueued)} ms after the enqueue`);
});
