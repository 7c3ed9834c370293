import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, createAlias, createMailbox, domain, whoIs } from '../helpers/mailboxes.js';

test('the installed resolver reads what the API created, in one snapshot', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  const { tenantId } = await whoIs(app, key);
  const { tenantId: otherTenant } = await whoIs(app, other);
  await domain(app, key, 'one.example');
  await domain(app, key, 'two.example');
  await domain(app, other, 'theirs.example');
  await createMailbox(app, key, 'one.example', 'ann@one.example');
  await createMailbox(app, key, 'two.example', 'bob@two.example');
  await createMailbox(app, other, 'theirs.example', 'eve@theirs.example');
  const id = async (a: string) => (await app.app.db.selectFrom('mailboxes').select('id').where('address', '=', a).executeTakeFirstOrThrow()).id;
  const [ann, bob, eve] = [await id('ann@one.example'), await id('bob@two.example'), await id('eve@theirs.example')];

  await createAlias(app, key, 'one.example', { address: 'team@one.example', goto: 'ann@one.example, sales@two.example' });
  await createAlias(app, key, 'two.example', { address: 'sales@two.example', goto: ['bob@two.example', 'Boss@Elsewhere.example', 'eve@theirs.example'] });
  await createAlias(app, key, 'one.example', { address: 'off@one.example', goto: 'ann@one.example' });
  const off = await app.post('/v1/edit/alias', key, { address: 'off@one.example', active: false });
  await app.pollTask('/v1/get/alias', key, off.body.task_id, TASK_WAIT_MS);
  await createAlias(app, key, 'two.example', { catch_all: true, goto: 'team@one.example' });

  const resolve = app.app.aliases.resolve;
  t.deepEqual(await resolve('ann@one.example'), { kind: 'deliver', tenantId, mailboxIds: [ann], forwards: [] });
  t.deepEqual(await resolve('Team@One.Example'), { kind: 'deliver', tenantId, mailboxIds: [ann, bob], forwards: ['boss@elsewhere.example', 'eve@theirs.example'] });
  t.deepEqual(await resolve('off@one.example'), { kind: 'unknown', tenantId });
  t.deepEqual(await resolve('nobody@one.example'), { kind: 'unknown', tenantId });
  t.deepEqual(await resolve('anyone@two.example'), { kind: 'deliver', tenantId, mailboxIds: [ann, bob], forwards: ['boss@elsewhere.example', 'eve@theirs.example'] });
  t.deepEqual(await resolve('eve@theirs.example'), { kind: 'deliver', tenantId: otherTenant, mailboxIds: [eve], forwards: [] });
  t.deepEqual(await resolve('x@elsewhere.example'), { kind: 'not-hosted' });
  t.deepEqual(await resolve('not an address'), { kind: 'not-hosted' });
  // A UTF-8 local part (RFC 6531) is no mailbox or alias name: a catch-all takes it, else it is nobody.
  t.deepEqual(await resolve('jürgen@one.example'), { kind: 'unknown', tenantId });
  t.deepEqual(await resolve('Jürgen@Two.Example'), { kind: 'deliver', tenantId, mailboxIds: [ann, bob], forwards: ['boss@elsewhere.example', 'eve@theirs.example'] });
  t.deepEqual(await resolve('jürgen@elsewhere.example'), { kind: 'not-hosted' });
  t.deepEqual(await resolve('jür gen@two.example'), { kind: 'unknown', tenantId }, 'not a dot-atom even in UTF-8');
  t.deepEqual(await resolve('jür..gen@two.example'), { kind: 'unknown', tenantId });
  t.deepEqual(await resolve(`${'ü'.repeat(33)}@two.example`), { kind: 'unknown', tenantId }, 'over 64 octets');
});

test('aliases are isolated between tenants', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, other, 'theirs.example');
  await createAlias(app, other, 'theirs.example', { address: 'a@theirs.example', goto: 'x@elsewhere.example' });
  const list = await app.get('/v1/list/alias?domain=theirs.example', key);
  t.is(list.status, 404);
  t.deepEqual(list.body, { status: 'error', reason: 'Domain not found' });
  t.is((await app.get('/v1/list/alias?domain=nowhere.example', key)).status, 404);
  t.is((await app.get('/v1/list/alias?domain=theirs.example')).status, 401);
  t.is((await app.get('/v1/list/alias?domain=theirs.example', await app.keyFor({ perms: ['write'] }))).status, 403);
  t.deepEqual((await app.get('/v1/list/alias', other)).body, { status: 'error', reason: 'domain is required' });
  // An alias address already held by another tenant is refused without revealing more.
  const clash = await app.post('/v1/create/alias', key, { Domain: 'theirs.example', Params: { address: 'b@theirs.example', goto: 'x@elsewhere.example' } });
  t.is(clash.status, 404);
  t.deepEqual(Object.keys((await app.get('/v1/list/alias?domain=theirs.example', other)).body.results), ['a@theirs.example']);
});
