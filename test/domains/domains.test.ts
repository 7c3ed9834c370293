import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';

test('a hostname registered by anyone is 409; names under another tenant\'s domain too', async (t) => {
  const app = await startTestApp(t);
  const a = await app.keyFor();
  const b = await app.keyFor();
  await app.domain(a, 'taken.example');
  const again = await app.post('/v1/create/domain', a, { Domain: 'TAKEN.example' });
  t.is(again.status, 409);
  t.regex(again.body.reason, /already registered/);
  t.is((await app.post('/v1/create/domain', b, { Domain: 'taken.example' })).status, 409);
  t.is((await app.post('/v1/create/domain', b, { Domain: 'deep.taken.example' })).status, 409);
});

test('internationalised names are stored as punycode', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const r = await app.post('/v1/create/domain', key, { Domain: 'Bücher.example' });
  t.is(r.status, 200);
  t.is(r.body.domain, 'xn--bcher-kva.example');
});

test('sub-domains complete keyed by full hostname under the parent', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await app.domain(key, 'root.example');
  const r = await app.post('/v1/create/sub-domain', key, { Domain: 'root.example', Params: { sub_domains: ['Mail', 'eu-1'], total_mailbox_allowed: 5 } });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['domain', 'status', 'task_id']);
  t.is(r.body.domain, 'root.example');
  const task = await app.pollTask('/v1/get/sub-domain', key, r.body.task_id);
  t.is(task.body.status, 'completed');
  t.is(task.body.Task_id, r.body.task_id);
  t.is(task.body.task_id, String(r.body.task_id));
  t.is(task.body.total_email, 0);
  t.is(task.body.results.domain, 'root.example');
  t.deepEqual(Object.keys(task.body.results.results).sort(), ['eu-1.root.example', 'mail.root.example']);
  const mail = task.body.results.results['mail.root.example'];
  t.is(mail.status, 'pending');
  t.is(mail.records.length, 11);
  t.is(mail.records[2].name, '_mailstead.mail.root.example');
  t.not(mail.records[2].value, task.body.results.results['eu-1.root.example'].records[2].value, 'tokens are unique per hostname');

  const list = await app.get('/v1/list/domain', key);
  t.is(list.status, 200);
  t.is(list.body.status, 'success');
  t.is(list.body.total_domain, 3);
  const today = new Date();
  const ddmmyyyy = `${String(today.getUTCDate()).padStart(2, '0')}-${String(today.getUTCMonth() + 1).padStart(2, '0')}-${today.getUTCFullYear()}`;
  t.deepEqual(list.body.results['root.example'], { status: 'pending', domain_type: 'root', domain_quota: '0GB', mailbox_count: '0', created_at: ddmmyyyy });
  t.is(list.body.results['mail.root.example'].domain_type, 'sub');
});

test('sub-domains of a parent the caller does not own are 404', async (t) => {
  const app = await startTestApp(t);
  const a = await app.keyFor();
  const b = await app.keyFor();
  await app.domain(a, 'mine.example');
  const r = await app.post('/v1/create/sub-domain', b, { Domain: 'mine.example', Params: { sub_domains: ['x'] } });
  t.is(r.status, 404);
  t.is(r.body.reason, 'Parent domain not found');
  t.is((await app.post('/v1/create/sub-domain', a, { Domain: 'nothere.example', Params: { sub_domains: ['x'] } })).status, 404);
  t.is((await app.post('/v1/create/sub-domain', a, { Domain: 'mine.example', Params: { sub_domains: ['x'] } })).status, 200);
  t.is((await app.post('/v1/create/sub-domain', a, { Domain: 'x.mine.example', Params: { sub_domains: ['y'] } })).status, 404, 'a sub-domain is not a parent');
});

test('the sub-domain cooldown: one success per 5 minutes per key and parent, failures do not count', async (t) => {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const app = await startTestApp(t, { clock });
  const tenant = await app.tenant();
  const key = await app.keyFor({ tenant });
  const other = await app.keyFor({ tenant });
  await app.domain(key, 'cool.example');
  await app.domain(key, 'warm.example');
  t.is((await app.post('/v1/create/sub-domain', key, { Domain: 'cool.example', Params: { sub_domains: ['bad_'] } })).status, 422);
  t.is((await app.post('/v1/create/sub-domain', key, { Domain: 'cool.example', Params: { sub_domains: ['a'] } })).status, 200);
  const blocked = await app.post('/v1/create/sub-domain', key, { Domain: 'cool.example', Params: { sub_domains: ['b'] } });
  t.is(blocked.status, 429);
  t.is(blocked.body.status, 'error');
  t.is(blocked.headers.get('retry-after'), '300');
  t.is((await app.post('/v1/create/sub-domain', key, { Domain: 'warm.example', Params: { sub_domains: ['b'] } })).status, 200, 'per parent');
  t.is((await app.post('/v1/create/sub-domain', other, { Domain: 'cool.example', Params: { sub_domains: ['c'] } })).status, 200, 'per key');
  clock.advance(299_000);
  t.is((await app.post('/v1/create/sub-domain', key, { Domain: 'cool.example', Params: { sub_domains: ['d'] } })).status, 429);
  clock.advance(1_000);
  t.is((await app.post('/v1/create/sub-domain', key, { Domain: 'cool.example', Params: { sub_domains: ['d'] } })).status, 200);
});

test('tasks are visible only to the key that created them; polls check the kind', async (t) => {
  const app = await startTestApp(t);
  const tenant = await app.tenant();
  const key = await app.keyFor({ tenant });
  const sameTenant = await app.keyFor({ tenant });
  const otherTenant = await app.keyFor();
  const r = await app.post('/v1/create/domain', key, { Domain: 'scoped.example' });
  await app.pollTask('/v1/get/domain', key, r.body.task_id);
  for (const k of [sameTenant, otherTenant]) {
    const p = await app.get(`/v1/get/domain?task_id=${r.body.task_id}`, k);
    t.is(p.status, 404);
    t.deepEqual(p.body, { status: 'error', reason: 'Task not found' });
  }
  t.is((await app.get('/v1/get/domain?task_id=999999', key)).status, 404);
  const wrongKind = await app.get(`/v1/get/sub-domain?task_id=${r.body.task_id}`, key);
  t.is(wrongKind.status, 422);
  t.regex(wrongKind.body.reason, /kind/);
  const list = await app.get('/v1/list/domain', otherTenant);
  t.deepEqual(list.body, { total_domain: 0, results: {}, status: 'success' });
  t.is((await app.get('/v1/list/domain', sameTenant)).body.total_domain, 1, 'resources are visible to the whole tenant');
});
