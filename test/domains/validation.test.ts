import test from 'ava';
import { startTestApp } from '../helpers/app.js';

const taskCount = (app: Awaited<ReturnType<typeof startTestApp>>) =>
  app.app.db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n));
const domainCount = (app: Awaited<ReturnType<typeof startTestApp>>) =>
  app.app.db.selectFrom('domains').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n));

const BAD_DOMAIN_BODIES: Array<[unknown, RegExp]> = [
  [{}, /^Domain is required$/],
  [{ Domain: 42 }, /^Domain must be string$/],
  [{ Domain: ['a.org'] }, /^Domain must be string$/],
  [{ Domain: '' }, /^Domain must not be empty$/],
  [{ Domain: 'localhost' }, /^Domain must have at least two labels/],
  [{ Domain: 'https://example.org' }, /^Domain must not include a scheme$/],
  [{ Domain: 'example.org:25' }, /^Domain must not include a port$/],
  [{ Domain: 'example.org/path' }, /^Domain must not include a path$/],
  [{ Domain: '192.168.1.10' }, /^Domain must not be an IP address$/],
  [{ Domain: '[::1]' }, /^Domain must not be an IP address$/],
  [{ Domain: 'example.org.' }, /^Domain must not end with a dot$/],
  [{ Domain: 'bad_label.example.org' }, /^Domain must not contain underscores$/],
  [{ Domain: '-lead.example.org' }, /^Domain has an invalid label "-lead"/],
  [{ Domain: 'a..example.org' }, /^Domain must not contain empty labels$/],
  [{ Domain: `${'a'.repeat(64)}.org` }, /^Domain must have labels of at most 63 characters$/],
  [{ Domain: `${Array(50).fill('abcd').join('.')}.orgx` }, /^Domain must be at most 253 characters$/], // 254 characters
  [{ Domain: 'example.org', Params: 'x' }, /^Params must be object$/],
  [{ Domain: 'example.org', Params: { total_mailbox_allowed: 0 } }, /^Params\.total_mailbox_allowed must be at least 1$/],
  [{ Domain: 'example.org', Params: { total_mailbox_allowed: 101 } }, /^Params\.total_mailbox_allowed must be at most 100$/],
  [{ Domain: 'example.org', Params: { total_mailbox_allowed: 5.5 } }, /^Params\.total_mailbox_allowed must be integer$/],
  [{ Domain: 'example.org', Params: { total_mailbox_allowed: '5' } }, /^Params\.total_mailbox_allowed must be integer$/],
  // SPEC.md: quota fields are not accepted on create (rather than silently dropped).
  [{ Domain: 'example.org', Params: { domain_quota: '5GB' } }, /^Params\.domain_quota is not accepted here$/],
  [{ Domain: 'example.org', Params: { quota: 5 } }, /^Params\.quota is not accepted here$/],
  [{ Domain: 'example.org', domain_quota: '5GB' }, /^domain_quota is not accepted here$/],
  [{ Domain: 'a.123' }, /^Domain must not end in an all-numeric label$/],
  [{ Domain: 'xn--zz.org' }, /^Domain has an invalid internationalised label "xn--zz"$/],
];

test('every bad create-domain body is a 422 naming the field, and nothing is stored or enqueued', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  t.is(`${Array(50).fill('abcd').join('.')}.orgx`.length, 254);
  for (const [body, reason] of BAD_DOMAIN_BODIES) {
    const r = await app.post('/v1/create/domain', key, body);
    t.is(r.status, 422, JSON.stringify(body));
    t.is(r.body.status, 'error');
    t.regex(r.body.reason, reason, JSON.stringify(body));
  }
  t.is(await taskCount(app), 0);
  t.is(await domainCount(app), 0);
});

test('bad sub-domain requests are 422 naming the field, before anything is stored', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await app.domain(key, 'parent.example');
  const tasksBefore = await taskCount(app);
  const cases: Array<[unknown, RegExp]> = [
    [{ Domain: 'parent.example' }, /^Params is required$/],
    [{ Domain: 'parent.example', Params: {} }, /^Params\.sub_domains is required$/],
    [{ Domain: 'parent.example', Params: { sub_domains: [] } }, /^Params\.sub_domains must not be empty$/],
    [{ Domain: 'parent.example', Params: { sub_domains: Array.from({ length: 11 }, (_, i) => `l${i}`) } }, /^Params\.sub_domains must have at most 10 items$/],
    [{ Domain: 'parent.example', Params: { sub_domains: ['bad_label'] } }, /^Params\.sub_domains\[0\] has an invalid format$/],
    [{ Domain: 'parent.example', Params: { sub_domains: ['ok', 'a.b'] } }, /^Params\.sub_domains\[1\] has an invalid format$/],
    [{ Domain: 'parent.example', Params: { sub_domains: ['-x'] } }, /^Params\.sub_domains\[0\]/],
    [{ Domain: 'parent.example', Params: { sub_domains: ['same', 'same'] } }, /^Params\.sub_domains must not contain duplicates$/],
    [{ Domain: 'parent.example', Params: { sub_domains: [7] } }, /^Params\.sub_domains\[0\] must be string$/],
    [{ Domain: 'parent.example', Params: { sub_domains: ['x'], total_mailbox_allowed: 101 } }, /^Params\.total_mailbox_allowed must be at most 100$/],
    [{ Domain: 'https://parent.example', Params: { sub_domains: ['x'] } }, /^Domain must not include a scheme$/],
  ];
  for (const [body, reason] of cases) {
    const r = await app.post('/v1/create/sub-domain', key, body);
    t.is(r.status, 422, JSON.stringify(body));
    t.regex(r.body.reason, reason, JSON.stringify(body));
  }
  t.is(await taskCount(app), tasksBefore);
  t.is(await domainCount(app), 1);
});

test('poll endpoints validate task_id', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  for (const q of ['', '?task_id=', '?task_id=abc', '?task_id=1.5', '?task_id=-3', '?task_id=0', '?task_id=1e0', '?task_id=0x1', '?task_id=%201', '?task_id=%2B1']) {
    const r = await app.get(`/v1/get/domain${q}`, key);
    t.is(r.status, 422, q);
    t.regex(r.body.reason, /task_id/);
  }
});
