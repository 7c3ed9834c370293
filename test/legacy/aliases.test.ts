import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { createAlias, createMailbox, domain, whoIs } from '../helpers/mailboxes.js';
import { legacyGet } from '../helpers/legacy.js';

test('list/alias: variant A\'s aliases, forwarders and catch-all, with user_id for the checked caller', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'alias.example');
  await createMailbox(app, key, 'alias.example', 'ann@alias.example');
  await createAlias(app, key, 'alias.example', { address: 'sales@alias.example', goto: 'ann@alias.example', sender_allowed: true });
  await createAlias(app, key, 'alias.example', { address: 'out@alias.example', goto: ['ext@elsewhere.example'] });
  await createAlias(app, key, 'alias.example', { catch_all: true, goto: 'ann@alias.example' });
  const me = (await whoIs(app, key)).tenantId;

  const a = await app.get('/v1/list/alias?domain=alias.example', key);
  const b = await legacyGet(app, '/list/alias', { key, caller_id: me, domain: 'Alias.example' });
  t.is(b.status, 200);
  t.deepEqual(b.body, { ...a.body, user_id: String(me) }, 'variant A\'s answer plus user_id');
  t.deepEqual(b.body.results['sales@alias.example'], { goto: ['ann@alias.example'], active: true, is_catch_all: false, provisioning_status: 'active' });
  t.true(b.body.results['@alias.example'].is_catch_all);
  t.deepEqual(b.body.results['out@alias.example'].goto, ['ext@elsewhere.example']);
});

test('list/alias refusals: caller_id missing, not an integer or another tenant\'s; another tenant\'s domain 404; header keys not read', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  const writeOnly = await app.keyFor({ perms: ['write'] });
  await domain(app, key, 'mine.example');
  await domain(app, other, 'theirs.example');
  await createMailbox(app, other, 'theirs.example', 'bo@theirs.example');
  await createAlias(app, other, 'theirs.example', { address: 'hidden@theirs.example', goto: 'bo@theirs.example' });
  const me = (await whoIs(app, key)).tenantId;
  const them = (await whoIs(app, other)).tenantId;

  t.deepEqual((await legacyGet(app, '/list/alias', { key, domain: 'mine.example' })).body, { status: 'error', reason: 'caller_id is required' });
  const notInteger = await legacyGet(app, '/list/alias', { key, caller_id: '12abc', domain: 'mine.example' });
  t.is(notInteger.status, 422);
  t.deepEqual(notInteger.body, { status: 'error', reason: 'caller_id must be integer' });
  const foreignCaller = await legacyGet(app, '/list/alias', { key, caller_id: them, domain: 'theirs.example' });
  t.is(foreignCaller.status, 403);
  t.deepEqual(foreignCaller.body, { status: 'error', reason: 'unauthorized caller' });
  const foreignDomain = await legacyGet(app, '/list/alias', { key, caller_id: me, domain: 'theirs.example' });
  t.is(foreignDomain.status, 404);
  t.deepEqual(foreignDomain.body, { status: 'error', reason: 'Domain not found' });
  t.deepEqual((await legacyGet(app, '/list/alias', { key, caller_id: me, domain: 'mine.example' })).body.results, {});
  t.deepEqual(Object.keys((await legacyGet(app, '/list/alias', { key: other, caller_id: them, domain: 'theirs.example' })).body.results), ['hidden@theirs.example']);
  t.is((await legacyGet(app, '/list/alias', { caller_id: me, domain: 'mine.example' })).status, 401);
  t.is((await legacyGet(app, '/list/alias', { caller_id: me, domain: 'mine.example' }, { authorization: `Bearer ${key}` })).status, 401);
  t.is((await legacyGet(app, '/list/alias', { key: writeOnly, caller_id: me, domain: 'mine.example' })).status, 403);
  t.is((await legacyGet(app, '/list/alias', { key, caller_id: me, domain: 'not a host' })).status, 422);
});
