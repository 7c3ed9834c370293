import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, createAlias, domain } from '../helpers/mailboxes.js';

test('alias bulk delete: deletes the tenant\'s aliases, skips others untouched; the poll is short', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, key, 'dl.example');
  await domain(app, other, 'theirs.example');
  await createAlias(app, key, 'dl.example', { address: 'a@dl.example', goto: 'x@elsewhere.example' });
  await createAlias(app, key, 'dl.example', { address: 'b@dl.example', goto: 'x@elsewhere.example' });
  await createAlias(app, key, 'dl.example', { catch_all: true, goto: 'a@dl.example' });
  await createAlias(app, other, 'theirs.example', { address: 'keep@theirs.example', goto: 'x@elsewhere.example' });

  const r = await app.post('/v1/delete/alias/bulk', key, { Aliases: ['A@dl.example', '@dl.example', 'keep@theirs.example', 'none@dl.example'] });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['status', 'task_id']);
  const task = await app.pollTask('/v1/get/delete/alias/bulk', key, r.body.task_id, TASK_WAIT_MS);
  t.deepEqual(task.body, { Task_id: r.body.task_id, status: 'completed', results: [], task_id: String(r.body.task_id) });
  t.deepEqual(Object.keys((await app.get('/v1/list/alias?domain=dl.example', key)).body.results), ['b@dl.example']);
  t.deepEqual(Object.keys((await app.get('/v1/list/alias?domain=theirs.example', other)).body.results), ['keep@theirs.example']);
  // The outcome per address is kept on the task, although alias polls show only [].
  t.deepEqual((await app.app.queue.get(r.body.task_id))!.results, {
    'a@dl.example': { status: 'deleted' },
    '@dl.example': { status: 'deleted' },
    'keep@theirs.example': { status: 'skipped', reason: 'not found' },
    'none@dl.example': { status: 'skipped', reason: 'not found' },
  });
  t.is((await app.get(`/v1/get/alias?task_id=${r.body.task_id}`, key)).status, 422);
  t.is((await app.get(`/v1/get/delete/alias/bulk?task_id=${r.body.task_id}`, other)).status, 404);
});

test('alias bulk delete refusals and its own cooldown per key and IP', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { clock });
  const key = await app.keyFor();
  const cases: Array<[unknown, string]> = [
    [{ Aliases: [] }, 'Aliases must not be empty'],
    [{ Aliases: Array.from({ length: 101 }, (_, i) => `a${i}@x.example`) }, 'Aliases must have at most 100 items'],
    [{ Aliases: ['a@x.example', 'a@x.example'] }, 'Aliases must not contain duplicates'],
    [{ Aliases: ['a@x.example', 'A@X.example'] }, 'Aliases must not contain duplicates'],
    [{ Aliases: ['a@x.example', 'nonsense'] }, 'Aliases[1] must be an address of the form local@domain'],
    [{ Aliases: ['@x'] }, 'Aliases[0] has a catch-all domain that must have at least two labels (single-label names are not accepted)'],
    [{}, 'Aliases is required'],
  ];
  for (const [body, reason] of cases) {
    const r = await app.post('/v1/delete/alias/bulk', key, body);
    t.is(r.status, 422, reason);
    t.deepEqual(r.body, { status: 'error', reason });
  }
  t.is((await app.post('/v1/delete/alias/bulk', undefined, { Aliases: ['a@x.example'] })).status, 401);
  t.is((await app.post('/v1/delete/alias/bulk', await app.keyFor({ perms: ['read'] }), { Aliases: ['a@x.example'] })).status, 403);
  t.is((await app.post('/v1/delete/alias/bulk', await app.keyFor({ plan: false }), { Aliases: ['a@x.example'] })).status, 403);

  // 422s did not count; the first valid call does, and the counter is not the mailbox or domain one.
  t.is((await app.post('/v1/delete/alias/bulk', key, { Aliases: ['a@x.example'] })).status, 200);
  const r429 = await app.post('/v1/delete/alias/bulk', key, { Aliases: ['b@x.example'] });
  t.is(r429.status, 429);
  t.is(r429.body.status, 'error');
  t.truthy(r429.headers.get('retry-after'));
  t.is((await app.post('/v1/delete/mailbox/bulk', key, { Mailboxes: ['b@x.example'] })).status, 200);
  t.is((await app.post('/v1/delete/domain/bulk', key, { Domains: ['x.example'] })).status, 200);
  t.is((await app.post('/v1/delete/alias/bulk', await app.keyFor(), { Aliases: ['b@x.example'] })).status, 200);
  clock.advance(300_000);
  t.is((await app.post('/v1/delete/alias/bulk', key, { Aliases: ['b@x.example'] })).status, 200);
});
