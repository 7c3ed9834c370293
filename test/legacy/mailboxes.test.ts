import test from 'ava';
import { verifyPassword } from '../../src/mailboxes/passwords.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { inboundBody, postInbound } from '../helpers/emails.js';
import { bulkMailboxes, createMailbox, domain, mailboxRow, whoIs } from '../helpers/mailboxes.js';
import { legacyGet, legacyPoll, legacyPost, taskCount } from '../helpers/legacy.js';

const CREATED = { status: 'Created successfully.' };

const single = (Domain: string, Email_fullname: string, Params: Record<string, unknown>) => ({ Email_fullname, single_bulk: 'single', Domain, Params });
const bulk = (Domain: string, Email_fullname: string, Params: Record<string, unknown>) => ({ Email_fullname, single_bulk: 'bulk', Domain, Params });

/** Creates through variant B and waits for the variant B poll; returns the task id and the final poll. */
async function legacyCreate(app: TestClient, key: string, kind: 'single' | 'bulk', body: Record<string, unknown>) {
  const r = await legacyPost(app, `/create/mailbox/${kind}`, key, body);
  if (r.status !== 200) throw new Error(`legacy ${kind} create: ${r.status} ${JSON.stringify(r.body)}`);
  return { taskId: r.body.task_id as number, accepted: r.body, poll: await legacyPoll(app, `/get/mailbox/${kind}`, key, r.body.task_id) };
}

/** The variant-independent enqueue of a task that is bound to fail (its domain does not exist). */
async function doomedTask(app: TestClient, key: string, kind: 'mailbox.single' | 'mailbox.bulk') {
  const k = (await app.app.tenants.authenticate(key))!;
  const payload = kind === 'mailbox.single'
    ? { domainId: 999_999, address: 'x@gone.example', displayName: '', password: 0 }
    : { domainId: 999_999, addresses: ['x@gone.example'], displayName: 'X', password: 0 };
  return app.app.db.transaction().execute((trx) => app.app.queue.enqueue(trx, { kind, tenantId: k.tenantId, keyId: k.id, domain: 'gone.example', payload }));
}

test('create/mailbox/single: Email_fullname is the local part; display_name and quota_mb are kept; the poll shows {status} only', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'example.org');
  const { taskId, accepted, poll } = await legacyCreate(app, key, 'single', single('Example.org', 'Ann.Smith', { password: 'correct horse', display_name: 'Ann Smith', quota_mb: 25 }));
  t.deepEqual(accepted, { status: 'success', task_id: taskId });
  t.is(poll.status, 200);
  t.deepEqual(poll.body, {
    Task_id: taskId, task_id: String(taskId), status: 'completed', total_email: 1, domain: 'example.org',
    results: { 'ann.smith@example.org': CREATED },
  });
  t.false(JSON.stringify(poll.body).includes('correct horse'), 'never a password');
  const row = (await mailboxRow(app, 'ann.smith@example.org'))!;
  t.is(row.display_name, 'Ann Smith');
  t.is(row.quota_mb, 25);
  t.true(await verifyPassword('correct horse', row.password_hash));

  // The same state through variant A: its poll of the same task, and its list.
  const a = await app.pollTask('/v1/get/mailbox/single', key, taskId);
  t.is(a.body.results['ann.smith@example.org'].quota, '25MB');
  const listA = await app.get('/v1/list/mailbox?domain=example.org', key);
  t.is(listA.body.results['ann.smith@example.org'].mailbox_quota, '25MB');

  // Defaults: no display name, unlimited quota; a generated password stays out of the poll too.
  const plain = await legacyCreate(app, key, 'single', single('example.org', 'bob', { password: 0 }));
  t.deepEqual(plain.poll.body.results, { 'bob@example.org': CREATED });
  const bob = (await mailboxRow(app, 'bob@example.org'))!;
  t.is(bob.display_name, '');
  t.is(bob.quota_mb, 0);
  const generated = (await app.pollTask('/v1/get/mailbox/single', key, plain.taskId)).body.results['bob@example.org'].password;
  t.regex(generated, /^[A-Za-z0-9_-]{24}$/);
  t.false(JSON.stringify(plain.poll.body).includes(generated));
});

test('create/mailbox/single: quota_mb is enforced at delivery', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'quota.example');
  await legacyCreate(app, key, 'single', single('quota.example', 'small', { password: 0, quota_mb: 1 }));
  await legacyCreate(app, key, 'single', single('quota.example', 'large', { password: 0 }));
  const big = 'x'.repeat(1_200_000);
  const over = await postInbound(app, key, inboundBody('small@quota.example', { body_text: big }));
  t.is(over.status, 422);
  t.deepEqual(over.body, { status: 'error', reason: 'mailbox over quota' });
  t.is((await postInbound(app, key, inboundBody('small@quota.example'))).status, 200, 'a message that fits');
  t.is((await postInbound(app, key, inboundBody('large@quota.example', { body_text: big }))).status, 200, 'quota_mb 0 is unlimited');
});

test('create/mailbox/single refusals: 401 for a missing permission or plan, 404 for a domain not owned, 422 for bad input; nothing enqueued', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  const readOnly = await app.keyFor({ perms: ['read'] });
  const noPlan = await app.keyFor({ plan: false });
  await domain(app, key, 'mine.example');
  await domain(app, other, 'theirs.example');
  await createMailbox(app, key, 'mine.example', 'taken@mine.example', 'password1');
  const before = await taskCount(app);
  const ok = single('mine.example', 'new', { password: 'password1' });

  t.is((await legacyPost(app, '/create/mailbox/single', undefined, ok)).status, 401);
  t.is((await legacyPost(app, '/create/mailbox/single', undefined, ok, { authorization: `Bearer ${key}` })).status, 401, 'header keys are not read');
  const perm = await legacyPost(app, '/create/mailbox/single', readOnly, ok);
  t.is(perm.status, 401, 'no 403: a key without write is 401');
  t.deepEqual(perm.body, { status: 'error', reason: 'API key lacks the "write" permission' });
  const plan = await legacyPost(app, '/create/mailbox/single', noPlan, ok);
  t.is(plan.status, 401, 'no 403: a tenant without a plan is 401');
  t.deepEqual(plan.body, { status: 'error', reason: 'No active pricing plan' });

  for (const host of ['theirs.example', 'nowhere.example']) {
    const r = await legacyPost(app, '/create/mailbox/single', key, single(host, 'new', { password: 'password1' }));
    t.is(r.status, 404, host);
    t.deepEqual(r.body, { status: 'error', reason: 'Domain not found' });
  }

  const invalid: Array<[Record<string, unknown>, string]> = [
    [single('mine.example', 'Ann Smith', { password: 'password1' }), 'Email_fullname must be a valid local part (letters, digits and !#$%&\'*+/=?^_`{|}~- in dot-separated runs)'],
    [single('mine.example', '', { password: 'password1' }), 'Email_fullname must not be empty'],
    [single('mine.example', 'a'.repeat(65), { password: 'password1' }), 'Email_fullname must be at most 64 characters'],
    [single('mine.example', 'ann@elsewhere.example', { password: 'password1' }), 'Email_fullname must be a valid local part (letters, digits and !#$%&\'*+/=?^_`{|}~- in dot-separated runs)'],
    [single('mine.example', 'Taken', { password: 'password1' }), 'Email_fullname taken@mine.example already exists'],
    [single('mine.example', 'new', { password: '0' }), 'Params.password must be the integer 0 (not the string "0") to generate a password'],
    [single('mine.example', 'new', { password: '1234567' }), 'Params.password must be at least 8 characters'],
    [single('mine.example', 'new', {}), 'Params.password is required'],
    [single('mine.example', 'new', { password: 0, quota_mb: -1 }), 'Params.quota_mb must be at least 0'],
    [single('mine.example', 'new', { password: 0, quota_mb: 1.5 }), 'Params.quota_mb must be integer'],
    [single('mine.example', 'new', { password: 0, display_name: 7 }), 'Params.display_name must be string'],
    [{ ...ok, single_bulk: 'bulk' }, 'single_bulk must be "single"'],
    [single('mine', 'new', { password: 0 }), 'Domain must have at least two labels (single-label names are not accepted)'],
  ];
  for (const [body, reason] of invalid) {
    const r = await legacyPost(app, '/create/mailbox/single', key, body);
    t.is(r.status, 422, JSON.stringify(body).slice(0, 120));
    t.deepEqual(r.body, { status: 'error', reason });
  }
  t.is(await taskCount(app), before, 'no refused request enqueued a task');
  t.is(await mailboxRow(app, 'new@mine.example'), undefined);
});

test('create/mailbox/bulk: count and quota_mb; no cooldown; the poll shows {status} only; both variants see the mailboxes', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'team.example');
  const first = await legacyCreate(app, key, 'bulk', bulk('team.example', 'Ann Lee Smith', { count: 3, password: 'shared secret', quota_mb: 10 }));
  t.deepEqual(first.accepted, { status: 'success', task_id: first.taskId });
  t.deepEqual(first.poll.body, {
    Task_id: first.taskId, task_id: String(first.taskId), status: 'completed', total_email: 3, domain: 'team.example',
    results: { 'ann.smith@team.example': CREATED, 'annsmith@team.example': CREATED, 'a.smith@team.example': CREATED },
  });
  t.false(JSON.stringify(first.poll.body).includes('shared secret'));

  // Straight away again: variant B has no bulk cooldown. Existing addresses are skipped as in variant A.
  const second = await legacyCreate(app, key, 'bulk', bulk('team.example', 'Ann Lee Smith', { count: 5, password: 0 }));
  t.is(second.poll.body.total_email, 2);
  t.deepEqual(second.poll.body.results, { 'ann@team.example': CREATED, 'asmith@team.example': CREATED });
  const third = await legacyCreate(app, key, 'bulk', bulk('team.example', 'Ann Lee Smith', { count: 5, password: 0 }));
  t.is(third.poll.body.total_email, 0);
  t.deepEqual(third.poll.body.results, {});

  const listA = await app.get('/v1/list/mailbox?domain=team.example', key);
  t.deepEqual(Object.keys(listA.body.results).sort(), ['a.smith@team.example', 'ann.smith@team.example', 'ann@team.example', 'annsmith@team.example', 'asmith@team.example']);
  t.is(listA.body.results['annsmith@team.example'].mailbox_quota, '10MB');
  t.is(listA.body.results['asmith@team.example'].mailbox_quota, '0MB');
  t.is((await mailboxRow(app, 'ann.smith@team.example'))!.display_name, 'Ann Lee Smith');

  // Variant B neither takes nor blocks on variant A's bulk cooldown.
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulk('team.example', 'Bo Ek', { mailbox_no: 1, password: 0 }))).status, 200);
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulk('team.example', 'Bo Ek', { mailbox_no: 2, password: 0 }))).status, 429);
  t.is((await legacyPost(app, '/create/mailbox/bulk', key, bulk('team.example', 'Bo Ek', { count: 2, password: 0 }))).status, 200);
});

test('create/mailbox/bulk refusals: 401 for a missing permission or plan, 404 for a domain not owned, 422 for bad input; nothing enqueued', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  const readOnly = await app.keyFor({ perms: ['read'] });
  const noPlan = await app.keyFor({ plan: false });
  await domain(app, key, 'mine.example', { total_mailbox_allowed: 2 });
  await domain(app, other, 'theirs.example');
  const before = await taskCount(app);
  const ok = bulk('mine.example', 'Ann Smith', { count: 1, password: 0 });

  t.is((await legacyPost(app, '/create/mailbox/bulk', undefined, ok, { 'x-api-key': key })).status, 401);
  t.is((await legacyPost(app, '/create/mailbox/bulk', readOnly, ok)).status, 401);
  t.is((await legacyPost(app, '/create/mailbox/bulk', noPlan, ok)).status, 401);
  const foreign = await legacyPost(app, '/create/mailbox/bulk', key, bulk('theirs.example', 'Ann Smith', { count: 1, password: 0 }));
  t.is(foreign.status, 404);
  t.deepEqual(foreign.body, { status: 'error', reason: 'Domain not found' });

  const invalid: Array<[Record<string, unknown>, string]> = [
    [bulk('mine.example', 'Ann Smith', { count: 0, password: 0 }), 'Params.count must be at least 1'],
    [bulk('mine.example', 'Ann Smith', { count: 101, password: 0 }), 'Params.count must be at most 100'],
    [bulk('mine.example', 'Ann Smith', { mailbox_no: 1, password: 0 }), 'Params.count is required'],
    [bulk('mine.example', 'Ann Smith', { count: 1, password: '0' }), 'Params.password must be the integer 0 (not the string "0") to generate a password'],
    [bulk('mine.example', 'Ann Smith', { count: 1, password: 0, quota_mb: -5 }), 'Params.quota_mb must be at least 0'],
    [bulk('mine.example', '!!!', { count: 1, password: 0 }), 'Email_fullname must contain letters or digits to derive addresses from'],
    [bulk('mine.example', 'Ann Smith', { count: 3, password: 0 }), 'Only 2 of 2 mailbox slots left on mine.example; this request needs 3'],
    [{ ...ok, single_bulk: 'single' }, 'single_bulk must be "bulk"'],
  ];
  for (const [body, reason] of invalid) {
    const r = await legacyPost(app, '/create/mailbox/bulk', key, body);
    t.is(r.status, 422, JSON.stringify(body));
    t.deepEqual(r.body, { status: 'error', reason });
  }
  t.is(await taskCount(app), before);
});

test('mailbox polls: variant A\'s tasks seen through variant B, 404 and 422 as variant A, failed bulk "task processing failed"', async (t) => {
  const app = await startTestApp(t);
  const tenant = await app.tenant();
  const key = await app.keyFor({ tenant });
  const sameTenant = await app.keyFor({ tenant });
  await domain(app, key, 'poll.example');

  // Created through variant A, polled through variant B: entries are {status} only.
  const a1 = await app.post('/v1/create/mailbox/single', key, { Email_fullname: 'Ann', single_bulk: 'single', Domain: 'poll.example', Params: { email_id: 'ann@poll.example', password: 'password1' } });
  const polled1 = await legacyPoll(app, '/get/mailbox/single', key, a1.body.task_id);
  t.deepEqual(polled1.body, { Task_id: a1.body.task_id, task_id: String(a1.body.task_id), status: 'completed', total_email: 1, domain: 'poll.example', results: { 'ann@poll.example': CREATED } });
  const aBulk = await bulkMailboxes(app, key, 'poll.example', 'Bo Ek', 2);
  const polled2 = await legacyPoll(app, '/get/mailbox/bulk', key, aBulk.body.Task_id);
  t.deepEqual(polled2.body.results, { 'bo.ek@poll.example': CREATED, 'boek@poll.example': CREATED });
  t.is(polled2.body.total_email, 2);

  // A task not yet run: results [] as in variant A.
  const k = (await app.app.tenants.authenticate(key))!;
  const later = await app.app.db.transaction().execute((trx) => app.app.queue.enqueue(trx, {
    kind: 'mailbox.single', tenantId: k.tenantId, keyId: k.id, domain: 'poll.example', runAfter: Date.now() + 3_600_000,
    payload: { domainId: 1, address: 'later@poll.example', displayName: '', password: 0 },
  }));
  const queued = await legacyGet(app, '/get/mailbox/single', { key, task_id: later });
  t.is(queued.body.status, 'queued');
  t.deepEqual(queued.body.results, []);

  // Failures: a single task's own reason; a bulk task's fixed one (variant A still shows the task's reason).
  const failedSingle = await legacyPoll(app, '/get/mailbox/single', key, await doomedTask(app, key, 'mailbox.single'));
  t.is(failedSingle.status, 422);
  t.deepEqual(failedSingle.body, { status: 'error', reason: 'Domain no longer exists' });
  const failedBulkId = await doomedTask(app, key, 'mailbox.bulk');
  const failedBulk = await legacyPoll(app, '/get/mailbox/bulk', key, failedBulkId);
  t.is(failedBulk.status, 422);
  t.deepEqual(failedBulk.body, { status: 'error', reason: 'task processing failed' });
  t.deepEqual((await app.get(`/v1/get/mailbox/bulk?task_id=${failedBulkId}`, key)).body, { status: 'error', reason: 'Domain no longer exists' });

  // Scope and kind.
  const notMine = await legacyGet(app, '/get/mailbox/single', { key: sameTenant, task_id: a1.body.task_id });
  t.is(notMine.status, 404, 'another key, even of the same tenant');
  t.deepEqual(notMine.body, { status: 'error', reason: 'Task not found' });
  t.is((await legacyGet(app, '/get/mailbox/single', { key, task_id: 999_999 })).status, 404);
  const wrongKind = await legacyGet(app, '/get/mailbox/bulk', { key, task_id: a1.body.task_id });
  t.is(wrongKind.status, 422);
  t.regex(wrongKind.body.reason, /kind/);
  const domainTask = await app.app.db.selectFrom('tasks').select('id').where('kind', '=', 'domain.create').executeTakeFirstOrThrow();
  t.is((await legacyGet(app, '/get/mailbox/single', { key, task_id: domainTask.id })).status, 422);
  const missing = await legacyGet(app, '/get/mailbox/single', { key });
  t.is(missing.status, 422);
  t.deepEqual(missing.body, { status: 'error', reason: 'task_id is required' });
  t.is((await legacyGet(app, '/get/mailbox/single', { key, task_id: 'abc' })).status, 422);
  t.is((await legacyGet(app, '/get/mailbox/bulk', { task_id: a1.body.task_id })).status, 401);
  t.is((await legacyGet(app, '/get/mailbox/bulk', { task_id: a1.body.task_id }, { authorization: `Bearer ${key}` })).status, 401);
});

test('list/mailbox: caller_id rules, user_id, imap_credentials always null, tenant isolation; variant A\'s mailboxes listed', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, key, 'mine.example');
  await domain(app, other, 'theirs.example');
  await createMailbox(app, key, 'mine.example', 'ann@mine.example'); // through variant A
  const me = (await whoIs(app, key)).tenantId;
  const them = (await whoIs(app, other)).tenantId;

  const r = await legacyGet(app, '/list/mailbox', { key, caller_id: me, domain: 'Mine.example', include_credentials: 1 });
  t.is(r.status, 200);
  const created = (await app.get('/v1/list/mailbox?domain=mine.example', key)).body.results['ann@mine.example'].created_at;
  t.deepEqual(r.body, {
    domain: 'mine.example', status: 'success', user_id: String(me),
    results: { 'ann@mine.example': { provisioning_status: 'active', mailbox_quota: '0MB', created_at: created, imap_credentials: null } },
  });
  t.deepEqual((await legacyGet(app, '/list/mailbox', { key, caller_id: me, domain: 'mine.example' })).body.results['ann@mine.example'].imap_credentials, null);
  t.truthy((await app.get('/v1/list/mailbox?domain=mine.example&include_credentials=1', key)).body.results['ann@mine.example'].imap_credentials, 'variant A still shows them');

  t.deepEqual((await legacyGet(app, '/list/mailbox', { key, domain: 'mine.example' })).body, { status: 'error', reason: 'caller_id is required' });
  t.is((await legacyGet(app, '/list/mailbox', { key, caller_id: 'me', domain: 'mine.example' })).status, 422);
  const foreignCaller = await legacyGet(app, '/list/mailbox', { key, caller_id: them, domain: 'mine.example' });
  t.is(foreignCaller.status, 403);
  t.deepEqual(foreignCaller.body, { status: 'error', reason: 'unauthorized caller' });
  const foreignDomain = await legacyGet(app, '/list/mailbox', { key, caller_id: me, domain: 'theirs.example' });
  t.is(foreignDomain.status, 404);
  t.deepEqual(foreignDomain.body, { status: 'error', reason: 'Domain not found' });
  t.deepEqual((await legacyGet(app, '/list/mailbox', { key, caller_id: me })).body, { status: 'error', reason: 'domain is required' });
  t.is((await legacyGet(app, '/list/mailbox', { caller_id: me, domain: 'mine.example' }, { authorization: `Bearer ${key}` })).status, 401);
  const theirs = await legacyGet(app, '/list/mailbox', { key: other, caller_id: them, domain: 'theirs.example' });
  t.deepEqual(theirs.body.results, {});
});
