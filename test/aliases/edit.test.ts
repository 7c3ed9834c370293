import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, createAlias, createMailbox, domain } from '../helpers/mailboxes.js';

const aliasRow = (app: Awaited<ReturnType<typeof startTestApp>>, address: string) =>
  app.app.db.selectFrom('aliases').select(['goto', 'active', 'sender_allowed']).where('address', '=', address).executeTakeFirstOrThrow();

test('edit toggles active and sender_allowed and replaces goto', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'ed.example');
  await createMailbox(app, key, 'ed.example', 'ann@ed.example');
  await createMailbox(app, key, 'ed.example', 'bob@ed.example');
  await createAlias(app, key, 'ed.example', { address: 'team@ed.example', goto: 'ann@ed.example' });

  const r = await app.post('/v1/edit/alias', key, { address: 'Team@ed.example', active: false, sender_allowed: true });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['status', 'task_id']);
  const task = await app.pollTask('/v1/get/alias', key, r.body.task_id, TASK_WAIT_MS);
  t.deepEqual(task.body, { Task_id: r.body.task_id, status: 'completed', results: [], task_id: String(r.body.task_id) });
  t.deepEqual(await aliasRow(app, 'team@ed.example'), { goto: '["ann@ed.example"]', active: 0, sender_allowed: 1 });
  t.false((await app.get('/v1/list/alias?domain=ed.example', key)).body.results['team@ed.example'].active);
  t.deepEqual(await app.app.aliases.resolve('team@ed.example'), { kind: 'unknown', tenantId: (await app.app.tenants.authenticate(key))!.tenantId });

  const r2 = await app.post('/v1/edit/alias', key, { address: 'team@ed.example', goto: ['bob@ed.example', 'x@elsewhere.example'], active: true });
  t.is((await app.pollTask('/v1/get/alias', key, r2.body.task_id, TASK_WAIT_MS)).body.status, 'completed');
  t.deepEqual(await aliasRow(app, 'team@ed.example'), { goto: '["bob@ed.example","x@elsewhere.example"]', active: 1, sender_allowed: 1 });
  t.deepEqual((await app.get('/v1/list/alias?domain=ed.example', key)).body.results['team@ed.example'],
    { goto: ['bob@ed.example', 'x@elsewhere.example'], active: true, is_catch_all: false, provisioning_status: 'active' });

  const r3 = await app.post('/v1/edit/alias', key, { address: 'team@ed.example', goto: 'ann@ed.example', sender_allowed: false });
  await app.pollTask('/v1/get/alias', key, r3.body.task_id, TASK_WAIT_MS);
  t.deepEqual(await aliasRow(app, 'team@ed.example'), { goto: '["ann@ed.example"]', active: 1, sender_allowed: 0 });

  // The catch-all is edited under its @domain key.
  await createAlias(app, key, 'ed.example', { catch_all: true, goto: 'ann@ed.example' });
  const r4 = await app.post('/v1/edit/alias', key, { address: '@ED.example', goto: 'bob@ed.example' });
  t.is(r4.status, 200);
  await app.pollTask('/v1/get/alias', key, r4.body.task_id, TASK_WAIT_MS);
  t.deepEqual((await aliasRow(app, '@ed.example')).goto, '["bob@ed.example"]');
});

test('edit refusals: unknown alias 422, invalid goto, loops, nothing to change, 401 and 403', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, key, 'er.example');
  await domain(app, other, 'theirs.example');
  await createAlias(app, key, 'er.example', { address: 'a@er.example', goto: 'x@elsewhere.example' });
  await createAlias(app, key, 'er.example', { address: 'b@er.example', goto: 'a@er.example' });
  await createAlias(app, other, 'theirs.example', { address: 'secret@theirs.example', goto: 'x@elsewhere.example' });

  t.is((await app.post('/v1/edit/alias', undefined, { address: 'a@er.example', active: false })).status, 401);
  t.is((await app.post('/v1/edit/alias', await app.keyFor({ perms: ['read'] }), { address: 'a@er.example', active: false })).status, 403);
  const cases: Array<[unknown, string]> = [
    [{ address: 'nobody@er.example', active: false }, 'Alias nobody@er.example not found'],
    [{ address: 'secret@theirs.example', active: false }, 'Alias secret@theirs.example not found'],
    [{ address: '@er.example', active: false }, 'Alias @er.example not found'],
    [{ address: 'a@er.example' }, 'Request body needs at least one of goto, active and sender_allowed'],
    [{ address: 'a@er.example', goto: 'not an address' }, 'goto destination "not an address" must be an address of the form local@domain'],
    [{ address: 'a@er.example', goto: '' }, 'goto must name at least one destination'],
    [{ address: 'a@er.example', goto: 'b@er.example' }, 'goto creates a loop: a@er.example -> b@er.example -> a@er.example'],
    [{ address: 'a@er.example', active: 'no' }, 'active must be boolean'],
    [{ address: 'nonsense', active: true }, 'address must be an address of the form local@domain'],
    [{ active: true }, 'address is required'],
  ];
  for (const [body, reason] of cases) {
    const r = await app.post('/v1/edit/alias', key, body);
    t.is(r.status, 422, reason);
    t.deepEqual(r.body, { status: 'error', reason });
  }
  t.deepEqual(await aliasRow(app, 'secret@theirs.example'), { goto: '["x@elsewhere.example"]', active: 1, sender_allowed: 0 });
});
