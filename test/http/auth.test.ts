import test from 'ava';
import { startTestApp } from '../helpers/app.js';

test('a key works in either header; a missing, malformed, unknown or revoked key gets 401', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor({ perms: ['read'] });
  const bearer = await app.request('GET', '/v1/list/domain', { headers: { authorization: `Bearer ${key}` } });
  t.is(bearer.status, 200);
  const header = await app.request('GET', '/v1/list/domain', { headers: { 'x-api-key': key } });
  t.is(header.status, 200);
  t.deepEqual(header.body, { total_domain: 0, results: {}, status: 'success' });

  const variants: Record<string, string>[] = [{}, { authorization: 'Bearer short' }, { authorization: `Basic ${key}` }, { 'x-api-key': 'A'.repeat(32) }, { authorization: `Bearer ${key}x` }];
  for (const headers of variants) {
    const r = await app.request('GET', '/v1/list/domain', { headers });
    t.is(r.status, 401, JSON.stringify(headers));
    t.is(r.body.status, 'error');
    t.is(typeof r.body.reason, 'string');
  }
  await app.app.tenants.revokeKey(key);
  const revoked = await app.get('/v1/list/domain', key);
  t.is(revoked.status, 401);
});

test('each permission is enforced with 403', async (t) => {
  const app = await startTestApp(t);
  const tenant = await app.tenant();
  const readOnly = await app.keyFor({ tenant, perms: ['read'] });
  const writeOnly = await app.keyFor({ tenant, perms: ['write'] });
  const inboundOnly = await app.keyFor({ tenant, perms: ['inbound', 'webhook'] });
  const create = await app.post('/v1/create/domain', readOnly, { Domain: 'perm.example' });
  t.is(create.status, 403);
  t.regex(create.body.reason, /write/);
  const list = await app.get('/v1/list/domain', writeOnly);
  t.is(list.status, 403);
  t.regex(list.body.reason, /read/);
  t.is((await app.get('/v1/list/domain', inboundOnly)).status, 403);
  t.is((await app.post('/v1/create/domain', writeOnly, { Domain: 'perm.example' })).status, 200);
});

test('create operations need an active plan; administrators are exempt', async (t) => {
  const app = await startTestApp(t);
  const noPlan = await app.keyFor({ plan: false });
  const r = await app.post('/v1/create/domain', noPlan, { Domain: 'plan.example' });
  t.is(r.status, 403);
  t.is(r.body.reason, 'No active pricing plan');
  t.is((await app.get('/v1/list/domain', noPlan)).status, 200, 'reading needs no plan');
  const admin = await app.keyFor({ plan: false, admin: true });
  t.is((await app.post('/v1/create/domain', admin, { Domain: 'plan.example' })).status, 200);
});

test('authentication comes before validation: a bad body with no key is 401', async (t) => {
  const app = await startTestApp(t);
  const r = await app.request('POST', '/v1/create/domain', { raw: '{nope', headers: { 'content-type': 'application/json' } });
  t.is(r.status, 401);
});

test('per-key rate limit answers 429 with Retry-After once the burst is spent', async (t) => {
  // One token per 10 s: a loaded CI machine taking a second between requests must not refill the bucket.
  const app = await startTestApp(t, { env: { MAILSTEAD_RATE_LIMIT: '0.1/3' } });
  const key = await app.keyFor();
  const other = await app.keyFor();
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await app.get('/v1/list/domain', key)).status);
  t.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
  t.true(statuses.slice(3).includes(429));
  const limited = await app.get('/v1/list/domain', key);
  t.is(limited.status, 429);
  t.regex(limited.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
  t.is((await app.get('/v1/list/domain', other)).status, 200, 'buckets are per key');
});
