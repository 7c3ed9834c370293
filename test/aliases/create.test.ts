import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, createAlias, createMailbox, domain, whoIs } from '../helpers/mailboxes.js';

test('an alias with a string goto and a forwarder with an array goto; the list shows both', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'al.example');
  await createMailbox(app, key, 'al.example', 'ann@al.example');
  await createMailbox(app, key, 'al.example', 'bob@al.example');

  const r = await app.post('/v1/create/alias', key, { Domain: 'al.example', Params: { address: 'Team@al.example', goto: ' ann@al.example, Bob@AL.example,ann@al.example ,' } });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['status', 'task_id']);
  t.is(r.body.status, 'success');
  const task = await app.pollTask('/v1/get/alias', key, r.body.task_id, TASK_WAIT_MS);
  t.is(task.status, 200);
  t.deepEqual(task.body, { Task_id: r.body.task_id, status: 'completed', results: [], task_id: String(r.body.task_id) });

  const fwd = await createAlias(app, key, 'al.example', { address: 'fwd@al.example', goto: ['Someone@Elsewhere.example', 'ann@al.example'], sender_allowed: true });
  t.is(fwd.body.status, 'completed');

  const list = await app.get('/v1/list/alias?domain=al.example', key);
  t.is(list.status, 200);
  t.deepEqual(list.body, {
    domain: 'al.example',
    results: {
      'fwd@al.example': { goto: ['someone@elsewhere.example', 'ann@al.example'], active: true, is_catch_all: false, provisioning_status: 'active' },
      'team@al.example': { goto: ['ann@al.example', 'bob@al.example'], active: true, is_catch_all: false, provisioning_status: 'active' },
    },
    status: 'success',
  });
  const rows = await app.app.db.selectFrom('aliases').select(['address', 'sender_allowed']).orderBy('address').execute();
  t.deepEqual(rows, [{ address: 'fwd@al.example', sender_allowed: 1 }, { address: 'team@al.example', sender_allowed: 0 }]);

  // The resolver sees them: local mailboxes delivered, the outside address forwarded.
  const ann = (await app.app.db.selectFrom('mailboxes').select('id').where('address', '=', 'ann@al.example').executeTakeFirst())!.id;
  const { tenantId } = (await app.app.tenants.authenticate(key))!;
  t.deepEqual(await app.app.aliases.resolve('FWD@al.example'), { kind: 'deliver', tenantId, mailboxIds: [ann], forwards: ['someone@elsewhere.example'] });
});

test('the catch-all: created without an address, listed under @domain, one per domain', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'ca.example');
  await createMailbox(app, key, 'ca.example', 'all@ca.example');
  const done = await createAlias(app, key, 'ca.example', { catch_all: true, goto: 'all@ca.example' });
  t.is(done.body.status, 'completed');
  const list = await app.get('/v1/list/alias?domain=ca.example', key);
  t.deepEqual(list.body.results, { '@ca.example': { goto: ['all@ca.example'], active: true, is_catch_all: true, provisioning_status: 'active' } });

  const again = await app.post('/v1/create/alias', key, { Domain: 'ca.example', Params: { catch_all: true, goto: 'x@elsewhere.example' } });
  t.is(again.status, 422);
  t.deepEqual(again.body, { status: 'error', reason: 'A catch-all already exists for ca.example' });
  const withAddress = await app.post('/v1/create/alias', key, { Domain: 'ca.example', Params: { catch_all: true, address: 'x@ca.example', goto: 'all@ca.example' } });
  t.deepEqual(withAddress.body, { status: 'error', reason: 'Params.address must be omitted when Params.catch_all is true (the catch-all is @ca.example)' });

  const all = (await app.app.db.selectFrom('mailboxes').select('id').where('address', '=', 'all@ca.example').executeTakeFirst())!.id;
  const resolution = await app.app.aliases.resolve('anyone@ca.example');
  t.deepEqual(resolution.kind === 'deliver' && resolution.mailboxIds, [all]);
});

test('alias create refusals: 401, 403, 404 and every 422', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, key, 'r.example');
  await domain(app, other, 'theirs.example');
  await createMailbox(app, key, 'r.example', 'ann@r.example');
  await createAlias(app, key, 'r.example', { address: 'team@r.example', goto: 'ann@r.example' });
  await createAlias(app, key, 'r.example', { address: 'b@r.example', goto: 'c@r.example' });
  await createAlias(app, key, 'r.example', { address: 'c@r.example', goto: 'ann@r.example' });
  const ok = { Domain: 'r.example', Params: { address: 'new@r.example', goto: 'ann@r.example' } };

  t.is((await app.post('/v1/create/alias', undefined, ok)).status, 401);
  t.is((await app.post('/v1/create/alias', await app.keyFor({ perms: ['read'] }), ok)).status, 403);
  t.is((await app.post('/v1/create/alias', await app.keyFor({ plan: false }), ok)).status, 403);
  for (const host of ['theirs.example', 'nowhere.example']) {
    const r = await app.post('/v1/create/alias', key, { Domain: host, Params: { address: `a@${host}`, goto: 'ann@r.example' } });
    t.is(r.status, 404);
    t.deepEqual(r.body, { status: 'error', reason: 'Domain not found' });
  }
  const many = Array.from({ length: 51 }, (_, i) => `d${i}@elsewhere.example`);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ address: 'ann@r.example', goto: 'x@elsewhere.example' }, 'Params.address ann@r.example already exists as a mailbox'],
    [{ address: 'Team@r.example', goto: 'x@elsewhere.example' }, 'Params.address team@r.example already exists as an alias'],
    [{ address: 'a@other.example', goto: 'ann@r.example' }, 'Params.address must be an address on r.example'],
    [{ address: 'bad address@r.example', goto: 'ann@r.example' }, 'Params.address has an invalid local part'],
    [{ goto: 'ann@r.example' }, 'Params.address is required unless Params.catch_all is true'],
    [{ address: 'n@r.example', goto: '' }, 'Params.goto must name at least one destination'],
    [{ address: 'n@r.example', goto: ' , ,' }, 'Params.goto must name at least one destination'],
    [{ address: 'n@r.example', goto: [] }, 'Params.goto must name at least one destination'],
    [{ address: 'n@r.example', goto: 'ann@r.example, not-an-address' }, 'Params.goto destination "not-an-address" must be an address of the form local@domain'],
    [{ address: 'n@r.example', goto: ['ann@r.example', 'x@bad_host.example'] }, 'Params.goto destination "x@bad_host.example" has a domain that must not contain underscores'],
    [{ address: 'n@r.example', goto: 42 }, 'Params.goto must be string or array'],
    [{ address: 'n@r.example', goto: many }, 'Params.goto must have at most 50 destinations'],
    [{ address: 'n@r.example', goto: many.join(',') }, 'Params.goto must have at most 50 destinations'],
    [{ address: 'n@r.example', goto: 'n@r.example' }, 'Params.goto creates a loop: n@r.example -> n@r.example'],
    [{ address: 'a@r.example', goto: 'b@r.example' }, 'Params.goto creates a loop: a@r.example -> b@r.example -> c@r.example -> a@r.example'],
    [{ address: 'n@r.example', goto: 'ann@r.example', catch_all: 'yes' }, 'Params.catch_all must be boolean'],
  ];
  // c@r.example goes to a mailbox, so the loop case needs c to point back first.
  await app.app.db.updateTable('aliases').set({ goto: JSON.stringify(['a@r.example']) }).where('address', '=', 'c@r.example').execute();
  for (const [params, reason] of cases) {
    const r = await app.post('/v1/create/alias', key, { Domain: 'r.example', Params: params });
    t.is(r.status, 422, reason);
    t.deepEqual(r.body, { status: 'error', reason });
  }
  // Fifty destinations (after duplicates are removed) are allowed.
  const fifty = await createAlias(app, key, 'r.example', { address: 'fifty@r.example', goto: [...many.slice(0, 50), many[0].toUpperCase()] });
  t.is(fifty.body.status, 'completed');
});

test('the per-domain alias limit', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'lim.example');
  const domainId = (await app.app.domains.store.byHostname(app.app.db, 'lim.example'))!.id;
  const { tenantId } = (await app.app.tenants.authenticate(key))!;
  await app.app.aliases.store.insert(app.app.db, Array.from({ length: 499 }, (_, i) => ({
    tenant_id: tenantId, domain_id: domainId, address: `a${i}@lim.example`, goto: '["x@elsewhere.example"]', is_catch_all: 0, sender_allowed: 0, created_at: 0, updated_at: 0,
  })));
  t.is((await createAlias(app, key, 'lim.example', { catch_all: true, goto: 'x@elsewhere.example' })).body.status, 'completed');
  const r = await app.post('/v1/create/alias', key, { Domain: 'lim.example', Params: { address: 'one-more@lim.example', goto: 'x@elsewhere.example' } });
  t.is(r.status, 422);
  t.deepEqual(r.body, { status: 'error', reason: 'Alias limit reached: lim.example has 500 of 500 aliases' });
  const bulk = await app.post('/v1/create/alias/bulk', key, { Domain: 'lim.example', Params: { aliases: [{ address: 'z@lim.example', goto: 'x@elsewhere.example' }] } });
  t.is(bulk.status, 422);
});

test('bulk alias create: all created, or refused as a whole', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'bk.example');
  await createMailbox(app, key, 'bk.example', 'ann@bk.example');
  const r = await app.post('/v1/create/alias/bulk', key, {
    Domain: 'bk.example',
    Params: { aliases: [{ address: 'sales@bk.example', goto: 'ann@bk.example' }, { address: 'info@bk.example', goto: ['sales@bk.example', 'boss@elsewhere.example'] }] },
  });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['status', 'task_id']);
  const task = await app.pollTask('/v1/get/alias', key, r.body.task_id, TASK_WAIT_MS);
  t.deepEqual(task.body, { Task_id: r.body.task_id, status: 'completed', results: [], task_id: String(r.body.task_id) });
  const list = await app.get('/v1/list/alias?domain=bk.example', key);
  t.deepEqual(Object.keys(list.body.results), ['info@bk.example', 'sales@bk.example']);
  t.deepEqual(list.body.results['info@bk.example'].goto, ['sales@bk.example', 'boss@elsewhere.example']);

  const refusals: Array<[unknown, string]> = [
    [[{ address: 'x@bk.example', goto: 'ann@bk.example' }, { address: 'X@bk.example', goto: 'ann@bk.example' }], 'Params.aliases[1].address x@bk.example is listed twice'],
    [[{ address: 'x@bk.example', goto: 'ann@bk.example' }, { address: 'sales@bk.example', goto: 'ann@bk.example' }], 'Params.aliases[1].address sales@bk.example already exists as an alias'],
    [[{ address: 'x@bk.example', goto: 'nope' }], 'Params.aliases[0].goto destination "nope" must be an address of the form local@domain'],
    [[{ address: 'x@elsewhere.example', goto: 'ann@bk.example' }], 'Params.aliases[0].address must be an address on bk.example'],
    [[{ address: 'not-an-address', goto: 'ann@bk.example' }], 'Params.aliases[0].address must be an address of the form local@domain'],
    [[{ address: 'x@bk.example' }], 'Params.aliases[0].goto is required'],
    [[], 'Params.aliases must not be empty'],
    [[{ address: 'x@bk.example', goto: 'y@bk.example' }, { address: 'y@bk.example', goto: 'x@bk.example' }], 'Params.aliases creates a loop: x@bk.example -> y@bk.example -> x@bk.example'],
  ];
  for (const [aliases, reason] of refusals) {
    const res = await app.post('/v1/create/alias/bulk', key, { Domain: 'bk.example', Params: { aliases } });
    t.is(res.status, 422, reason);
    t.deepEqual(res.body, { status: 'error', reason });
  }
  t.is((await app.app.db.selectFrom('aliases').select('id').execute()).length, 2);
  t.is((await app.post('/v1/create/alias/bulk', key, { Domain: 'nowhere.example', Params: { aliases: [{ address: 'a@nowhere.example', goto: 'ann@bk.example' }] } })).status, 404);
  t.is((await app.post('/v1/create/alias/bulk', undefined, { Domain: 'bk.example', Params: { aliases: [] } })).status, 401);
});

test('alias polls: 404 for unknown or another key\'s task, 422 for another kind and for a failed task', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'ap.example');
  const created = await createAlias(app, key, 'ap.example', { address: 'a@ap.example', goto: 'x@elsewhere.example' });
  const id = created.body.Task_id;
  t.is((await app.get(`/v1/get/alias?task_id=${id + 1000}`, key)).status, 404);
  t.is((await app.get(`/v1/get/alias?task_id=${id}`, await app.keyFor())).status, 404);
  t.is((await app.get(`/v1/get/delete/alias/bulk?task_id=${id}`, key)).status, 422);
  t.is((await app.get(`/v1/get/mailbox/single?task_id=${id}`, key)).status, 422);
  t.is((await app.get(`/v1/get/alias?task_id=${id}`)).status, 401);

  // A task that finds its address taken when it runs fails, and its poll says why.
  const { tenantId, keyId } = await whoIs(app, key);
  const domainId = (await app.app.domains.store.byHostname(app.app.db, 'ap.example'))!.id;
  const taskId = await app.app.db.transaction().execute(async (trx) => {
    const tid = await app.app.queue.enqueue(trx, {
      kind: 'alias.create', tenantId, keyId, domain: 'ap.example',
      payload: { domainId, aliases: [{ address: 'b@ap.example', goto: ['x@elsewhere.example'] }], catchAll: false, senderAllowed: false },
    });
    await app.app.aliases.store.insert(trx, [{ tenant_id: tenantId, domain_id: domainId, address: 'b@ap.example', goto: '["y@elsewhere.example"]', is_catch_all: 0, sender_allowed: 0, created_at: 0, updated_at: 0 }]);
    return tid;
  });
  const failed = await app.pollTask('/v1/get/alias', key, taskId, TASK_WAIT_MS);
  t.is(failed.status, 422);
  t.deepEqual(failed.body, { status: 'error', reason: 'Alias b@ap.example already exists as an alias' });
});
