import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { verifyPassword } from '../../src/mailboxes/passwords.js';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, createMailbox, domain, mailboxRow, whoIs } from '../helpers/mailboxes.js';

const body = (domain: string, email_id: string, password: unknown, extra: Record<string, unknown> = {}) =>
  ({ Email_fullname: 'Ann Smith', single_bulk: 'single', Domain: domain, Params: { email_id, password }, ...extra });

test('a single mailbox is created with every field of the result', async (t) => {
  const clock = manualClock(Date.UTC(2024, 4, 6, 7, 8, 9));
  const app = await startTestApp(t, { clock });
  const key = await app.keyFor();
  await domain(app, key, 'example.org');
  const r = await app.post('/v1/create/mailbox/single', key, body('example.org', 'Ann.Smith@Example.org', 'correct horse'));
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['status', 'task_id']);
  t.is(r.body.status, 'success');
  t.true(Number.isInteger(r.body.task_id));
  const task = await app.pollTask('/v1/get/mailbox/single', key, r.body.task_id, TASK_WAIT_MS);
  t.is(task.status, 200);
  t.deepEqual(task.body, {
    Task_id: r.body.task_id,
    task_id: String(r.body.task_id),
    status: 'completed',
    total_email: 1,
    domain: 'example.org',
    results: {
      'ann.smith@example.org': {
        email: 'ann.smith@example.org', password: 'correct horse', quota: '0MB', domain: 'example.org',
        provisioning: 'pending', create_date: '2024-05-06 07:08:09',
      },
    },
  });
  const row = (await mailboxRow(app, 'ann.smith@example.org'))!;
  t.is(row.display_name, 'Ann Smith');
  t.is(row.status, 'active');
  t.regex(row.password_hash, /^\$scrypt\$ln=\d+,r=8,p=1\$/);
  t.false(row.password_hash.includes('correct horse'));
  t.true(await verifyPassword('correct horse', row.password_hash));
  t.false(await verifyPassword('correct hors', row.password_hash));
});

test('password rules: 8 characters and the integer 0 pass; 7 characters, the string "0" and other numbers fail', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'pw.example');

  const eight = await createMailbox(app, key, 'pw.example', 'eight@pw.example', '12345678');
  t.is(eight.body.results['eight@pw.example'].password, '12345678');

  const generated = await createMailbox(app, key, 'pw.example', 'gen@pw.example', 0);
  const pw = generated.body.results['gen@pw.example'].password;
  t.regex(pw, /^[A-Za-z0-9_-]{24}$/);
  t.true(await verifyPassword(pw, (await mailboxRow(app, 'gen@pw.example'))!.password_hash));

  const refusals: Array<[unknown, string]> = [
    ['1234567', 'Params.password must be at least 8 characters'],
    ['0', 'Params.password must be the integer 0 (not the string "0") to generate a password'],
    [5, 'Params.password must be a string of at least 8 characters or the integer 0'],
    [0.5, 'Params.password must be string or integer'],
    [null, 'Params.password must be string or integer'],
  ];
  for (const [password, reason] of refusals) {
    const r = await app.post('/v1/create/mailbox/single', key, body('pw.example', 'x@pw.example', password));
    t.is(r.status, 422, String(password));
    t.deepEqual(r.body, { status: 'error', reason });
  }
  t.is(await mailboxRow(app, 'x@pw.example'), undefined);
});

test('validation, authentication, plan and ownership errors of single create', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, key, 'mine.example');
  await domain(app, other, 'theirs.example');
  await createMailbox(app, key, 'mine.example', 'taken@mine.example', 'password1');
  const ok = body('mine.example', 'new@mine.example', 'password1');

  t.is((await app.post('/v1/create/mailbox/single', undefined, ok)).status, 401);
  t.is((await app.post('/v1/create/mailbox/single', 'x'.repeat(32), ok)).status, 401);
  const readOnly = await app.keyFor({ perms: ['read'] });
  t.is((await app.post('/v1/create/mailbox/single', readOnly, ok)).status, 403);
  const noPlan = await app.keyFor({ plan: false });
  const r403 = await app.post('/v1/create/mailbox/single', noPlan, ok);
  t.deepEqual(r403.body, { status: 'error', reason: 'No active pricing plan' });
  t.is(r403.status, 403);

  const r404 = await app.post('/v1/create/mailbox/single', key, body('theirs.example', 'a@theirs.example', 'password1'));
  t.is(r404.status, 404);
  t.deepEqual(r404.body, { status: 'error', reason: 'Domain not found' });
  t.is((await app.post('/v1/create/mailbox/single', key, body('unknown.example', 'a@unknown.example', 'password1'))).status, 404);

  const cases: Array<[unknown, string]> = [
    [body('mine.example', 'a@other.example', 'password1'), 'Params.email_id must be an address on mine.example'],
    [body('mine.example', 'not-an-address', 'password1'), 'Params.email_id must be an address of the form local@domain'],
    [body('mine.example', 'taken@mine.example', 'password1'), 'Params.email_id taken@mine.example already exists'],
    [body('mine.example', 'TAKEN@Mine.example', 'password1'), 'Params.email_id taken@mine.example already exists'],
    [body('mine..example', 'a@mine.example', 'password1'), 'Domain must not contain empty labels'],
    [{ ...ok, single_bulk: 'bulk' }, 'single_bulk must be "single"'],
    [{ Domain: 'mine.example', single_bulk: 'single', Params: { email_id: 'a@mine.example', password: 0 } }, 'Email_fullname is required'],
    [{ ...ok, Email_fullname: '' }, 'Email_fullname must not be empty'],
    [{ ...ok, Params: { password: 0 } }, 'Params.email_id is required'],
    [{ ...ok, Params: undefined }, 'Params is required'],
  ];
  for (const [b, reason] of cases) {
    const r = await app.post('/v1/create/mailbox/single', key, b);
    t.is(r.status, 422, reason);
    t.deepEqual(r.body, { status: 'error', reason });
  }
});

test('an address taken between enqueue and run fails the task; the poll answers 422 with the reason', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'race.example');
  const { tenantId, keyId } = await whoIs(app, key);
  const domainId = (await app.app.domains.store.byHostname(app.app.db, 'race.example'))!.id;
  // The task and the competing mailbox commit together, so the task can only see the address taken.
  const taskId = await app.app.db.transaction().execute(async (trx) => {
    const id = await app.app.queue.enqueue(trx, {
      kind: 'mailbox.single', tenantId, keyId, domain: 'race.example',
      payload: { domainId, address: 'ann@race.example', displayName: 'Ann', password: 0 },
    });
    await app.app.mailboxes.store.insert(trx, [{ tenant_id: tenantId, domain_id: domainId, address: 'ann@race.example', display_name: '', password_hash: 'x', created_at: 0 }]);
    return id;
  });
  const r = await app.pollTask('/v1/get/mailbox/single', key, taskId, TASK_WAIT_MS);
  t.is(r.status, 422);
  t.deepEqual(r.body, { status: 'error', reason: 'Mailbox ann@race.example already exists' });
});

test('polls: unknown task 404, another key\'s task 404, another kind 422, no key 401', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'poll.example');
  const done = await createMailbox(app, key, 'poll.example', 'a@poll.example');
  const id = done.body.Task_id;
  t.is((await app.get(`/v1/get/mailbox/single?task_id=${id + 1000}`, key)).status, 404);
  t.is((await app.get(`/v1/get/mailbox/single?task_id=${id}`, await app.keyFor())).status, 404);
  const wrongKind = await app.get(`/v1/get/mailbox/bulk?task_id=${id}`, key);
  t.is(wrongKind.status, 422);
  t.deepEqual(wrongKind.body, { status: 'error', reason: 'Task is not of the kind this endpoint polls' });
  t.is((await app.get(`/v1/get/domain?task_id=${id}`, key)).status, 422);
  t.is((await app.get(`/v1/get/mailbox/single?task_id=${id}`)).status, 401);
  t.is((await app.get('/v1/get/mailbox/single?task_id=abc', key)).status, 422);
  t.is((await app.get(`/v1/get/mailbox/single?task_id=${id}`, await app.keyFor({ perms: ['write'] }))).status, 403);
});

test('parallel creates: requests accepted but not yet run hold their slot and their address, so the others are refused up front', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const create = (host: string, address: string) =>
    app.post('/v1/create/mailbox/single', key, { Email_fullname: 'R', single_bulk: 'single', Domain: host, Params: { email_id: address, password: 'password1' } });
  await domain(app, key, 'rush.example', { total_mailbox_allowed: 1 });
  const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => create('rush.example', `r${i}@rush.example`)));
  const accepted = replies.filter((r) => r.status === 200);
  t.is(accepted.length, 1, JSON.stringify(replies.map((r) => r.status)));
  for (const r of replies.filter((x) => x.status !== 200)) t.deepEqual(r.body, { status: 'error', reason: 'No mailbox slots left on rush.example (all 1 are used)' });
  t.is((await app.pollTask('/v1/get/mailbox/single', key, accepted[0].body.task_id, TASK_WAIT_MS)).body.status, 'completed');

  await domain(app, key, 'same.example');
  const same = await Promise.all(Array.from({ length: 6 }, () => create('same.example', 'dup@same.example')));
  const first = same.filter((r) => r.status === 200);
  t.is(first.length, 1, JSON.stringify(same.map((r) => r.status)));
  for (const r of same.filter((x) => x.status !== 200)) {
    t.is(r.status, 422);
    t.regex(r.body.reason, /^Params\.email_id dup@same\.example (is already being created|already exists)$/);
  }
  t.is((await app.pollTask('/v1/get/mailbox/single', key, first[0].body.task_id, TASK_WAIT_MS)).body.status, 'completed');
});
