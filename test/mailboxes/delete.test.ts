import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { createEventRecorder } from '../../src/webhooks/events.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { PRIVATE_HOOKS, subscribeAll } from '../helpers/webhooks.js';
import { TASK_WAIT_MS, bulkMailboxes, createAlias, createMailbox, domain, mailboxRow, whoIs } from '../helpers/mailboxes.js';

const count = async (app: TestClient, table: 'mailboxes' | 'aliases' | 'domains' | 'dns_records' | 'events') =>
  Number((await app.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

async function subDomains(app: TestClient, key: string, parent: string, labels: string[]) {
  const r = await app.post('/v1/create/sub-domain', key, { Domain: parent, Params: { sub_domains: labels } });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  await app.pollTask('/v1/get/sub-domain', key, r.body.task_id, TASK_WAIT_MS);
}

test('deleting a root removes its two sub-domains, their mailboxes, aliases, events and DNS records', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  const key = await app.keyFor();
  await subscribeAll(t, app, key);
  const { tenantId } = await whoIs(app, key);
  await domain(app, key, 'root.example');
  await subDomains(app, key, 'root.example', ['one', 'two']);
  await domain(app, key, 'keep.example');
  await createMailbox(app, key, 'root.example', 'ann@root.example');
  await bulkMailboxes(app, key, 'one.root.example', 'Bob Jones', 3);
  await createMailbox(app, key, 'two.root.example', 'cy@two.root.example');
  await createMailbox(app, key, 'keep.example', 'dee@keep.example');
  await createAlias(app, key, 'root.example', { address: 'team@root.example', goto: 'ann@root.example, cy@two.root.example' });
  await createAlias(app, key, 'two.root.example', { catch_all: true, goto: 'cy@two.root.example' });
  await createAlias(app, key, 'keep.example', { address: 'fwd@keep.example', goto: 'ann@root.example' });
  const ids = Object.fromEntries((await app.app.db.selectFrom('mailboxes').select(['id', 'address']).execute()).map((m) => [m.address, m.id]));
  const events = createEventRecorder({ clock: app.app.clock });
  await events.record(app.app.db, [
    { tenantId, type: 'email.received', emailId: 1, mailboxId: ids['ann@root.example'] },
    { tenantId, type: 'email.received', emailId: 2, mailboxId: ids['cy@two.root.example'] },
    { tenantId, type: 'email.received', emailId: 3, mailboxId: ids['dee@keep.example'] },
  ]);
  const hooked: number[][] = [];
  const hookedDomains: number[][] = [];
  app.app.mailboxes.onMailboxesDeleted(async (_trx, mailboxIds) => { hooked.push([...mailboxIds].sort((a, b) => a - b)); });
  app.app.mailboxes.onDomainsDeleted(async (_trx, domainIds) => { hookedDomains.push(domainIds); });

  const r = await app.post('/v1/delete/domain/bulk', key, { Domains: ['root.example', 'one.root.example', 'nowhere.example'] });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['status', 'task_id']);
  const task = await app.pollTask('/v1/get/delete/domain/bulk', key, r.body.task_id, TASK_WAIT_MS);
  t.is(task.status, 200);
  t.deepEqual(task.body, {
    Task_id: r.body.task_id,
    task_id: String(r.body.task_id),
    status: 'completed',
    total_email: 3,
    domain: 'root.example',
    results: {
      'root.example': { status: 'deleted' },
      'one.root.example': { status: 'skipped', reason: 'deleted with its parent' },
      'nowhere.example': { status: 'skipped', reason: 'not found' },
    },
  });
  const gone = ['ann@root.example', 'bob.jones@one.root.example', 'bobjones@one.root.example', 'b.jones@one.root.example', 'cy@two.root.example'].map((a) => ids[a]);
  t.deepEqual(hooked, [[...gone].sort((a, b) => a - b)]);
  t.is(hookedDomains.length, 1);
  t.is(hookedDomains[0].length, 3);
  t.deepEqual(Object.keys((await app.get('/v1/list/domain', key)).body.results), ['keep.example']);
  t.is(await count(app, 'mailboxes'), 1);
  t.is(await count(app, 'domains'), 1);
  t.is(await count(app, 'dns_records'), 11);
  t.is(await count(app, 'events'), 1);
  t.deepEqual((await app.app.db.selectFrom('aliases').select('address').execute()).map((a) => a.address), ['fwd@keep.example']);
  t.is((await app.get('/v1/list/mailbox?domain=root.example', key)).status, 404);
  // The forwarder on the kept domain now points at a hostname nobody hosts: it is a plain forward.
  const fwd = await app.app.aliases.resolve('fwd@keep.example');
  t.deepEqual(fwd, { kind: 'deliver', tenantId, mailboxIds: [], forwards: ['ann@root.example'] });
  t.deepEqual(await app.app.aliases.resolve('ann@root.example'), { kind: 'not-hosted' });
});

test('an item whose deletion fails is rolled back alone and reported failed', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'ok.example');
  await domain(app, key, 'bad.example');
  await createMailbox(app, key, 'ok.example', 'a@ok.example');
  await createMailbox(app, key, 'bad.example', 'a@bad.example');
  const bad = (await mailboxRow(app, 'a@bad.example'))!.id;
  app.app.mailboxes.onMailboxesDeleted(async (trx, mailboxIds) => {
    // Some work happens before the failure; the savepoint must undo it.
    await trx.deleteFrom('aliases').execute();
    if (mailboxIds.includes(bad)) throw new Error('storage is on fire');
  });
  await createAlias(app, key, 'ok.example', { address: 'x@ok.example', goto: 'a@ok.example' });
  const r = await app.post('/v1/delete/domain/bulk', key, { Domains: ['bad.example', 'ok.example'] });
  const task = await app.pollTask('/v1/get/delete/domain/bulk', key, r.body.task_id, TASK_WAIT_MS);
  t.deepEqual(task.body.results, {
    'bad.example': { status: 'failed', reason: 'Deletion failed: internal error' },
    'ok.example': { status: 'deleted' },
  });
  t.is(task.body.status, 'completed');
  t.truthy(await mailboxRow(app, 'a@bad.example'));
  t.deepEqual(Object.keys((await app.get('/v1/list/domain', key)).body.results), ['bad.example']);
  t.is(await mailboxRow(app, 'a@ok.example'), undefined);
});

test('mailbox bulk delete: per-address outcomes, total_email counts what was submitted, other tenants untouched', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, key, 'mb.example');
  await domain(app, other, 'theirs.example');
  await createMailbox(app, key, 'mb.example', 'a@mb.example');
  await createMailbox(app, key, 'mb.example', 'b@mb.example');
  await createMailbox(app, other, 'theirs.example', 'keep@theirs.example');
  const hooked: number[][] = [];
  app.app.mailboxes.onMailboxesDeleted(async (_trx, ids) => { hooked.push(ids); });

  const r = await app.post('/v1/delete/mailbox/bulk', key, { Mailboxes: ['A@mb.example', 'keep@theirs.example', 'none@mb.example'] });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['status', 'task_id']);
  const task = await app.pollTask('/v1/get/delete/mailbox/bulk', key, r.body.task_id, TASK_WAIT_MS);
  t.deepEqual(task.body, {
    Task_id: r.body.task_id,
    task_id: String(r.body.task_id),
    status: 'completed',
    total_email: 3,
    domain: 'mb.example',
    results: {
      'a@mb.example': { status: 'deleted' },
      'keep@theirs.example': { status: 'skipped', reason: 'not found' },
      'none@mb.example': { status: 'skipped', reason: 'not found' },
    },
  });
  t.is(hooked.length, 1);
  t.is(await mailboxRow(app, 'a@mb.example'), undefined);
  t.truthy(await mailboxRow(app, 'b@mb.example'));
  t.truthy(await mailboxRow(app, 'keep@theirs.example'));
  t.is((await app.get('/v1/list/domain', key)).body.results['mb.example'].mailbox_count, '1');
  t.is((await app.get(`/v1/get/delete/mailbox/bulk?task_id=${r.body.task_id}`, other)).status, 404);
  t.is((await app.get(`/v1/get/delete/domain/bulk?task_id=${r.body.task_id}`, key)).status, 422);
});

test('tenant isolation: another tenant\'s domain in a bulk delete is skipped as not found and untouched', async (t) => {
  const app = await startTestApp(t);
  const owner = await app.keyFor();
  const intruder = await app.keyFor();
  await domain(app, owner, 'owned.example');
  await createMailbox(app, owner, 'owned.example', 'a@owned.example');
  const r = await app.post('/v1/delete/domain/bulk', intruder, { Domains: ['owned.example'] });
  t.is(r.status, 200);
  const task = await app.pollTask('/v1/get/delete/domain/bulk', intruder, r.body.task_id, TASK_WAIT_MS);
  t.deepEqual(task.body.results, { 'owned.example': { status: 'skipped', reason: 'not found' } });
  t.deepEqual(Object.keys((await app.get('/v1/list/domain', owner)).body.results), ['owned.example']);
  t.truthy(await mailboxRow(app, 'a@owned.example'));
});

test('bulk delete validation (422 before enqueue), permissions and the separate cooldowns per key and IP', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { clock });
  const key = await app.keyFor();
  const cases: Array<[string, unknown, string]> = [
    ['/v1/delete/mailbox/bulk', { Mailboxes: [] }, 'Mailboxes must not be empty'],
    ['/v1/delete/mailbox/bulk', { Mailboxes: Array.from({ length: 101 }, (_, i) => `a${i}@x.example`) }, 'Mailboxes must have at most 100 items'],
    ['/v1/delete/mailbox/bulk', { Mailboxes: ['a@x.example', 'nonsense'] }, 'Mailboxes[1] must be an address of the form local@domain'],
    ['/v1/delete/mailbox/bulk', { Mailboxes: ['a@x.example', 'a@x.example'] }, 'Mailboxes must not contain duplicates'],
    ['/v1/delete/mailbox/bulk', { Mailboxes: ['a@x.example', 'A@x.EXAMPLE'] }, 'Mailboxes must not contain duplicates'],
    ['/v1/delete/mailbox/bulk', { Mailboxes: 'a@x.example' }, 'Mailboxes must be array'],
    ['/v1/delete/mailbox/bulk', {}, 'Mailboxes is required'],
    ['/v1/delete/domain/bulk', { Domains: [] }, 'Domains must not be empty'],
    ['/v1/delete/domain/bulk', { Domains: Array.from({ length: 11 }, (_, i) => `d${i}.example`) }, 'Domains must have at most 10 items'],
    ['/v1/delete/domain/bulk', { Domains: ['https://x.example'] }, 'Domains[0] must not include a scheme'],
    ['/v1/delete/domain/bulk', { Domains: ['localhost'] }, 'Domains[0] must have at least two labels (single-label names are not accepted)'],
    ['/v1/delete/domain/bulk', { Domains: ['x.example', 'x.example'] }, 'Domains must not contain duplicates'],
    ['/v1/delete/domain/bulk', { Domains: ['x.example', 'X.Example'] }, 'Domains must not contain duplicates'],
  ];
  for (const [path, body, reason] of cases) {
    const r = await app.post(path, key, body);
    t.is(r.status, 422, reason);
    t.deepEqual(r.body, { status: 'error', reason });
  }
  for (const path of ['/v1/delete/mailbox/bulk', '/v1/delete/domain/bulk']) {
    const body = path.includes('mailbox') ? { Mailboxes: ['a@x.example'] } : { Domains: ['x.example'] };
    t.is((await app.post(path, undefined, body)).status, 401);
    t.is((await app.post(path, await app.keyFor({ perms: ['read'] }), body)).status, 403);
    t.is((await app.post(path, await app.keyFor({ plan: false }), body)).status, 403);
  }
  const secondKey = await app.keyFor({ perms: ['read', 'write'] });

  // The 422s above did not start a cooldown; each kind has its own counter.
  const m1 = await app.post('/v1/delete/mailbox/bulk', key, { Mailboxes: ['a@x.example'] });
  t.is(m1.status, 200);
  t.is((await app.post('/v1/delete/domain/bulk', key, { Domains: ['x.example'] })).status, 200);
  const m2 = await app.post('/v1/delete/mailbox/bulk', key, { Mailboxes: ['b@x.example'] });
  t.is(m2.status, 429);
  t.regex(m2.body.reason, /^Cooldown in force/);
  t.is(m2.headers.get('retry-after'), '300');
  t.is((await app.post('/v1/delete/domain/bulk', key, { Domains: ['y.example'] })).status, 429);
  // Another key from the same IP has its own counters.
  t.is((await app.post('/v1/delete/mailbox/bulk', secondKey, { Mailboxes: ['b@x.example'] })).status, 200);
  clock.advance(300_000);
  t.is((await app.post('/v1/delete/mailbox/bulk', key, { Mailboxes: ['b@x.example'] })).status, 200);
  // Polls need read.
  t.is((await app.get(`/v1/get/delete/mailbox/bulk?task_id=${m1.body.task_id}`, await app.keyFor({ perms: ['write'] }))).status, 403);
  t.is((await app.get(`/v1/get/delete/mailbox/bulk?task_id=${m1.body.task_id}`, key)).status, 200);
});
