import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestApp } from '../helpers/app.js';
import { whoIs } from '../helpers/mailboxes.js';
import { legacyGet, legacyPost, settleDomainTasks, taskCount } from '../helpers/legacy.js';
import { lastCheck } from '../helpers/poll.js';

const today = () => {
  const d = new Date();
  return `${String(d.getUTCDate()).padStart(2, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${d.getUTCFullYear()}`;
};

test('the legacy cooldown is 3600 seconds by default, set by MAILSTEAD_LEGACY_COOLDOWN_SECONDS, and a bad value is refused', (t) => {
  t.is(loadConfig({ MAILSTEAD_HOSTNAME: 'mail.example.org' }).legacyCooldownSeconds, 3600);
  t.is(loadConfig({ MAILSTEAD_HOSTNAME: 'mail.example.org', MAILSTEAD_LEGACY_COOLDOWN_SECONDS: '5' }).legacyCooldownSeconds, 5);
  const err = t.throws(() => loadConfig({ MAILSTEAD_LEGACY_COOLDOWN_SECONDS: 'hourly' }), { instanceOf: ConfigError });
  t.true(err!.message.includes('MAILSTEAD_LEGACY_COOLDOWN_SECONDS'));
});

test('create/domain answers {status, domain} without a task id; the task runs and both variants list the domain', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const r = await legacyPost(app, '/create/domain', key, { Domain: 'Legacy.Example', Params: { total_mailbox_allowed: 7 } });
  t.is(r.status, 200);
  t.deepEqual(r.body, { status: 'success', domain: 'legacy.example' });
  await settleDomainTasks(app);
  const task = await app.app.db.selectFrom('tasks').select(['key_id', 'status']).where('domain', '=', 'legacy.example').where('kind', '=', 'domain.create').executeTakeFirstOrThrow();
  t.deepEqual(task, { key_id: (await whoIs(app, key)).keyId, status: 'completed' });
  const row = await app.app.db.selectFrom('domains').select(['id', 'total_mailbox_allowed']).where('hostname', '=', 'legacy.example').executeTakeFirstOrThrow();
  t.is(row.total_mailbox_allowed, 7);
  const records = await app.app.db.selectFrom('dns_records').select('type').where('domain_id', '=', row.id).execute();
  t.is(records.length, 11, 'the DNS plan was provisioned as in variant A');

  // The same state through variant A.
  const a = await app.get('/v1/list/domain', key);
  t.deepEqual(a.body.results['legacy.example'], { status: 'pending', domain_type: 'root', domain_quota: '0GB', mailbox_count: '0', created_at: today() });
  const { tenantId } = await whoIs(app, key);
  const b = await legacyGet(app, '/list/domain', { key, caller_id: tenantId });
  t.deepEqual(b.body, {
    total_domain: 1, status: 'success', user_id: String(tenantId),
    results: { 'legacy.example': { status: 'pending', domain_quota: '0GB', mailbox_count: '0', created_at: today() } },
  });
});

test('create/domain refusals are variant A\'s (401, 403, 409, 422) and enqueue nothing; header keys are not read', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const noPlan = await app.keyFor({ plan: false });
  const readOnly = await app.keyFor({ perms: ['read'] });
  await app.domain(key, 'taken.example'); // through variant A
  const before = await taskCount(app);

  const unauthorized = { status: 'error', reason: 'API key invalid or missing' };
  const noKey = await legacyPost(app, '/create/domain', undefined, { Domain: 'a.example' });
  t.is(noKey.status, 401);
  t.deepEqual(noKey.body, unauthorized);
  t.is((await legacyPost(app, '/create/domain', 'x'.repeat(32), { Domain: 'a.example' })).status, 401, 'unknown key');
  t.is((await legacyPost(app, '/create/domain', 42 as unknown as string, { Domain: 'a.example' })).status, 401, 'key not a string');
  const bearer = await legacyPost(app, '/create/domain', undefined, { Domain: 'a.example' }, { authorization: `Bearer ${key}` });
  t.is(bearer.status, 401, 'an Authorization header alone is no key here');
  t.deepEqual(bearer.body, unauthorized);
  t.is((await legacyPost(app, '/create/domain', undefined, { Domain: 'a.example' }, { 'x-api-key': key })).status, 401, 'nor X-Api-Key');
  const inQuery = await app.request('POST', `/legacy/v1/create/domain?key=${key}`, { body: { Domain: 'a.example' } });
  t.is(inQuery.status, 401, 'a POST reads the key from its body only');

  const planless = await legacyPost(app, '/create/domain', noPlan, { Domain: 'a.example' });
  t.is(planless.status, 403);
  t.deepEqual(planless.body, { status: 'error', reason: 'No active pricing plan' });
  const perm = await legacyPost(app, '/create/domain', readOnly, { Domain: 'a.example' });
  t.is(perm.status, 403);
  t.regex(perm.body.reason, /"write" permission/);

  const dup = await legacyPost(app, '/create/domain', key, { Domain: 'TAKEN.example' });
  t.is(dup.status, 409);
  t.deepEqual(dup.body, { status: 'error', reason: 'Domain taken.example is already registered' });

  const invalid: Array<[Record<string, unknown>, string]> = [
    [{}, 'Domain is required'],
    [{ Domain: 'localhost' }, 'Domain must have at least two labels (single-label names are not accepted)'],
    [{ Domain: 'https://a.example' }, 'Domain must not include a scheme'],
    [{ Domain: 'a.example', Params: { total_mailbox_allowed: 101 } }, 'Params.total_mailbox_allowed must be at most 100'],
    [{ Domain: 'a.example', Params: { quota_mb: 5 } }, 'Params.quota_mb is not accepted here'],
  ];
  for (const [body, reason] of invalid) {
    const r = await legacyPost(app, '/create/domain', key, body);
    t.is(r.status, 422, JSON.stringify(body));
    t.deepEqual(r.body, { status: 'error', reason });
  }
  const malformed = await app.request('POST', '/legacy/v1/create/domain', { raw: '{"key":', headers: { 'content-type': 'application/json' } });
  t.is(malformed.status, 422);
  t.deepEqual(malformed.body, { status: 'error', reason: 'Malformed JSON body' });
  t.is(await taskCount(app), before, 'no refused request enqueued a task');
  t.is(await app.app.db.selectFrom('domains').select('id').where('hostname', '=', 'a.example').executeTakeFirst(), undefined);
});

test('create/sub-domain answers with the parent and no task id; both variants list the sub-domains', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await app.domain(key, 'root.example'); // through variant A
  const r = await legacyPost(app, '/create/sub-domain', key, { Domain: 'Root.example', Params: { sub_domains: ['Mail', 'eu-1'], total_mailbox_allowed: 5 } });
  t.is(r.status, 200);
  t.deepEqual(r.body, { status: 'success', domain: 'root.example' });
  await settleDomainTasks(app);
  const task = await app.app.db.selectFrom('tasks').select(['status', 'result']).where('kind', '=', 'subdomain.create').executeTakeFirstOrThrow();
  t.is(task.status, 'completed');
  t.deepEqual(Object.keys(JSON.parse(task.result!).results).sort(), ['eu-1.root.example', 'mail.root.example']);

  const a = await app.get('/v1/list/domain', key);
  t.is(a.body.total_domain, 3);
  t.deepEqual(a.body.results['mail.root.example'], { status: 'pending', domain_type: 'sub', domain_quota: '0GB', mailbox_count: '0', created_at: today() });
  const { tenantId } = await whoIs(app, key);
  const b = await legacyGet(app, '/list/domain', { key, caller_id: tenantId });
  t.deepEqual(Object.keys(b.body.results).sort(), ['eu-1.root.example', 'mail.root.example', 'root.example']);
  t.false('domain_type' in b.body.results['eu-1.root.example']);
  const slots = await app.app.db.selectFrom('domains').select('total_mailbox_allowed').where('hostname', '=', 'eu-1.root.example').executeTakeFirstOrThrow();
  t.is(slots.total_mailbox_allowed, 5);
});

test('create/sub-domain refusals: 404 for a parent not owned, 422 for labels, 401 and 403 as variant A; nothing enqueued', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  const noPlan = await app.keyFor({ plan: false });
  await app.domain(key, 'mine.example');
  await app.domain(other, 'theirs.example');
  const before = await taskCount(app);
  const sub = (Domain: string, sub_domains: unknown) => ({ Domain, Params: { sub_domains } });

  const foreign = await legacyPost(app, '/create/sub-domain', key, sub('theirs.example', ['a']));
  t.is(foreign.status, 404);
  t.deepEqual(foreign.body, { status: 'error', reason: 'Parent domain not found' });
  t.is((await legacyPost(app, '/create/sub-domain', key, sub('nowhere.example', ['a']))).status, 404);
  const invalid: Array<[unknown, string]> = [
    [[], 'Params.sub_domains must not be empty'],
    [Array.from({ length: 11 }, (_, i) => `s${i}`), 'Params.sub_domains must have at most 10 items'],
    [['bad_label'], 'Params.sub_domains[0] has an invalid format'],
    [['a', 'a'], 'Params.sub_domains must not contain duplicates'],
  ];
  for (const [labels, reason] of invalid) {
    const r = await legacyPost(app, '/create/sub-domain', key, sub('mine.example', labels));
    t.is(r.status, 422, JSON.stringify(labels));
    t.deepEqual(r.body, { status: 'error', reason });
  }
  t.is((await legacyPost(app, '/create/sub-domain', undefined, sub('mine.example', ['a']), { authorization: `Bearer ${key}` })).status, 401);
  t.is((await legacyPost(app, '/create/sub-domain', noPlan, sub('mine.example', ['a']))).status, 403);
  t.is(await taskCount(app), before);
});

test('the sub-domain cooldown is 1 success per hour per key and parent on a counter of its own; failures do not count', async (t) => {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const app = await startTestApp(t, { clock });
  const tenant = await app.tenant();
  const key = await app.keyFor({ tenant });
  const sameTenant = await app.keyFor({ tenant });
  await app.domain(key, 'cool.example');
  await app.domain(key, 'warm.example');
  const legacySub = (k: string, parent: string, label: string) => legacyPost(app, '/create/sub-domain', k, { Domain: parent, Params: { sub_domains: [label] } });
  const variantASub = (parent: string, label: string) => app.post('/v1/create/sub-domain', key, { Domain: parent, Params: { sub_domains: [label] } });

  t.is((await variantASub('cool.example', 'a1')).status, 200, 'variant A starts its own 5-minute counter');
  t.is((await legacySub(key, 'cool.example', 'bad_')).status, 422);
  t.is((await legacySub(key, 'cool.example', 'a1')).status, 409, 'a refused request does not count');
  t.is((await legacySub(key, 'cool.example', 'b1')).status, 200, 'variant A\'s counter does not block variant B');
  const blocked = await legacySub(key, 'cool.example', 'b2');
  t.is(blocked.status, 429);
  t.is(blocked.body.status, 'error');
  t.regex(blocked.body.reason, /^Cooldown in force/);
  t.is(blocked.headers.get('retry-after'), '3600');
  t.is((await legacySub(key, 'warm.example', 'b2')).status, 200, 'per parent');
  t.is((await legacySub(sameTenant, 'cool.example', 'b3')).status, 200, 'per key');

  clock.advance(301_000);
  t.is((await variantASub('cool.example', 'a2')).status, 200, 'variant A\'s 5 minutes are over');
  t.is((await legacySub(key, 'cool.example', 'b4')).status, 429, 'variant B\'s hour is not');
  clock.advance(3_600_000 - 301_000 - 1_000);
  t.is((await legacySub(key, 'cool.example', 'b4')).status, 429);
  clock.advance(1_000);
  t.is((await legacySub(key, 'cool.example', 'b4')).status, 200);
});

test('the sub-domain cooldown follows MAILSTEAD_LEGACY_COOLDOWN_SECONDS', async (t) => {
  // 8 seconds: short enough for a test, long enough that a busy machine still sends the second
  // request inside it.
  const app = await startTestApp(t, { env: { MAILSTEAD_LEGACY_COOLDOWN_SECONDS: '8' } });
  const key = await app.keyFor();
  await app.domain(key, 'short.example');
  const legacySub = (label: string) => legacyPost(app, '/create/sub-domain', key, { Domain: 'short.example', Params: { sub_domains: [label] } });
  const started = Date.now();
  t.is((await legacySub('one')).status, 200);
  const blocked = await legacySub('two');
  t.is(blocked.status, 429);
  t.true(Number(blocked.headers.get('retry-after')) >= 1 && Number(blocked.headers.get('retry-after')) <= 8);
  // Polled, not slept: the second request passes once the 8 seconds are over (bounded at 60 s).
  const status = await lastCheck(async () => (await legacySub('two')).status, { timeoutMs: 60_000, everyMs: 250, done: (s) => s !== 429 });
  t.is(status, 200);
  // The cooldown started after `started` (when the first request committed), so it ends after started + 8 s.
  t.true(Date.now() - started >= 7_900, 'not before the cooldown ran out');
});

test('list/domain: caller_id is required and must be the key owner\'s id; tenants see only their own domains', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  const writeOnly = await app.keyFor({ perms: ['write'] });
  await app.domain(key, 'mine.example');
  await app.domain(other, 'theirs.example');
  const me = (await whoIs(app, key)).tenantId;
  const them = (await whoIs(app, other)).tenantId;

  const missing = await legacyGet(app, '/list/domain', { key });
  t.is(missing.status, 422);
  t.deepEqual(missing.body, { status: 'error', reason: 'caller_id is required' });
  for (const bad of ['abc', '1.5', '0x10', '']) {
    const r = await legacyGet(app, '/list/domain', { key, caller_id: bad });
    t.is(r.status, 422, bad);
    t.regex(r.body.reason, /^caller_id must be integer/);
  }
  const foreign = await legacyGet(app, '/list/domain', { key, caller_id: them });
  t.is(foreign.status, 403);
  t.deepEqual(foreign.body, { status: 'error', reason: 'unauthorized caller' });
  t.is((await legacyGet(app, '/list/domain', { key, caller_id: 999_999 })).status, 403, 'an id of no tenant');

  const mine = await legacyGet(app, '/list/domain', { key, caller_id: me });
  t.is(mine.status, 200);
  t.deepEqual(Object.keys(mine.body.results), ['mine.example']);
  t.is(mine.body.total_domain, 1);
  t.is(mine.body.user_id, String(me));
  const theirs = await legacyGet(app, '/list/domain', { key: other, caller_id: them });
  t.deepEqual(Object.keys(theirs.body.results), ['theirs.example']);

  t.is((await legacyGet(app, '/list/domain', { caller_id: me })).status, 401);
  t.is((await legacyGet(app, '/list/domain', { caller_id: me }, { authorization: `Bearer ${key}` })).status, 401, 'header keys are not read');
  t.is((await legacyGet(app, '/list/domain', { caller_id: me }, { 'x-api-key': key })).status, 401);
  const perm = await legacyGet(app, '/list/domain', { key: writeOnly, caller_id: me });
  t.is(perm.status, 403);
  t.regex(perm.body.reason, /"read" permission/);
});
