import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { verifyPassword } from '../../src/mailboxes/passwords.js';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, bulkMailboxes, createMailbox, domain, mailboxRow, whoIs } from '../helpers/mailboxes.js';

const bulkBody = (domain: string, fullname: string, mailbox_no: unknown, password: unknown = 0) =>
  ({ Email_fullname: fullname, single_bulk: 'bulk', Domain: domain, Params: { mailbox_no, password } });
const FIVE_MINUTES = 300_000;

test('bulk create with generated passwords: ASCII-folded addresses, one password each', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'bulk.example');
  const r = await app.post('/v1/create/mailbox/bulk', key, bulkBody('bulk.example', 'Zoë Ångström-Berg', 4));
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['status', 'task_id']);
  t.is(r.body.status, 'success');
  const task = await app.pollTask('/v1/get/mailbox/bulk', key, r.body.task_id, TASK_WAIT_MS);
  t.is(task.status, 200);
  t.deepEqual(Object.keys(task.body).sort(), ['Task_id', 'domain', 'results', 'status', 'task_id', 'total_email']);
  t.is(task.body.Task_id, r.body.task_id);
  t.is(task.body.task_id, String(r.body.task_id));
  t.is(task.body.status, 'completed');
  t.is(task.body.domain, 'bulk.example');
  t.is(task.body.total_email, 4);
  const addresses = ['zoe.angstrom-berg', 'zoeangstrom-berg', 'z.angstrom-berg', 'zoe'].map((l) => `${l}@bulk.example`);
  t.deepEqual(Object.keys(task.body.results), addresses);
  const passwords = new Set<string>();
  for (const a of addresses) {
    const entry = task.body.results[a];
    t.deepEqual(Object.keys(entry).sort(), ['password', 'status']);
    t.is(entry.status, 'Created successfully.');
    t.regex(entry.password, /^[A-Za-z0-9_-]{24}$/);
    passwords.add(entry.password);
    const row = (await mailboxRow(app, a))!;
    t.is(row.display_name, 'Zoë Ångström-Berg');
    t.true(await verifyPassword(entry.password, row.password_hash));
  }
  t.is(passwords.size, 4);
});

test('bulk create with a shared password; existing addresses are skipped and not counted', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { clock });
  const key = await app.keyFor();
  await domain(app, key, 'shared.example');
  await createMailbox(app, key, 'shared.example', 'ann.smith@shared.example', 'own password');
  const task = await bulkMailboxes(app, key, 'shared.example', 'Ann Lee Smith', 3, 'team password');
  t.is(task.body.status, 'completed');
  t.is(task.body.total_email, 2);
  t.deepEqual(task.body.results, {
    'annsmith@shared.example': { status: 'Created successfully.', password: 'team password' },
    'a.smith@shared.example': { status: 'Created successfully.', password: 'team password' },
  });
  // The existing mailbox keeps its own password.
  t.true(await verifyPassword('own password', (await mailboxRow(app, 'ann.smith@shared.example'))!.password_hash));
  t.true(await verifyPassword('team password', (await mailboxRow(app, 'a.smith@shared.example'))!.password_hash));

  // Repeating the same request after the cooldown creates nothing.
  clock.advance(FIVE_MINUTES);
  const again = await bulkMailboxes(app, key, 'shared.example', 'Ann Lee Smith', 3, 'team password');
  t.is(again.body.status, 'completed');
  t.is(again.body.total_email, 0);
  t.deepEqual(again.body.results, {});

  // A larger request continues the deterministic list.
  clock.advance(FIVE_MINUTES);
  const more = await bulkMailboxes(app, key, 'shared.example', 'Ann Lee Smith', 10, 0);
  t.deepEqual(Object.keys(more.body.results), ['ann', 'asmith', 'ann_smith', 'smith.ann', 'ann.s', 'ann.smith1', 'ann.smith2']
    .map((l) => `${l}@shared.example`));
  t.is(more.body.total_email, 7);
});

test('the bulk cooldown is per key and hostname, and only successes count', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { clock });
  const tenant = await app.tenant();
  const key = await app.keyFor({ tenant });
  const sameTenantKey = await app.keyFor({ tenant });
  await domain(app, key, 'cool.example');
  await domain(app, key, 'other-cool.example');

  // A refused request does not start the cooldown.
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulkBody('cool.example', 'Ann Smith', 2, 'short'))).status, 422);
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulkBody('cool.example', 'Ann Smith', 101))).status, 422);
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulkBody('cool.example', 'Ann Smith', 2))).status, 200);

  const r429 = await app.post('/v1/create/mailbox/bulk', key, bulkBody('cool.example', 'Bob Jones', 2));
  t.is(r429.status, 429);
  t.is(r429.body.status, 'error');
  t.regex(r429.body.reason, /^Cooldown in force: try again in 300 seconds$/);
  t.is(r429.headers.get('retry-after'), '300');
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulkBody('other-cool.example', 'Bob Jones', 2))).status, 200);
  t.is((await app.post('/v1/create/mailbox/bulk', sameTenantKey, bulkBody('cool.example', 'Bob Jones', 2))).status, 200);

  clock.advance(FIVE_MINUTES - 1000);
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulkBody('cool.example', 'Bob Jones', 2))).status, 429);
  clock.advance(1000);
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulkBody('cool.example', 'Carl Jones', 2))).status, 200);
});

test('bulk validation, authentication and ownership errors', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, key, 'v.example');
  await domain(app, other, 'theirs.example');
  const ok = bulkBody('v.example', 'Ann Smith', 2);
  t.is((await app.post('/v1/create/mailbox/bulk', undefined, ok)).status, 401);
  t.is((await app.post('/v1/create/mailbox/bulk', await app.keyFor({ perms: ['read'] }), ok)).status, 403);
  t.is((await app.post('/v1/create/mailbox/bulk', await app.keyFor({ plan: false }), ok)).status, 403);
  t.is((await app.post('/v1/create/mailbox/bulk', await app.keyFor({ plan: false, admin: true }), bulkBody('nowhere.example', 'Ann Smith', 1))).status, 404);
  const r404 = await app.post('/v1/create/mailbox/bulk', key, bulkBody('theirs.example', 'Ann Smith', 2));
  t.is(r404.status, 404);
  t.deepEqual(r404.body, { status: 'error', reason: 'Domain not found' });
  const cases: Array<[unknown, string]> = [
    [bulkBody('v.example', 'Ann Smith', 0), 'Params.mailbox_no must be at least 1'],
    [bulkBody('v.example', 'Ann Smith', 101), 'Params.mailbox_no must be at most 100'],
    [bulkBody('v.example', 'Ann Smith', '5'), 'Params.mailbox_no must be integer'],
    [bulkBody('v.example', 'Ann Smith', 2, '0'), 'Params.password must be the integer 0 (not the string "0") to generate a password'],
    [bulkBody('v.example', 'Ann Smith', 2, '1234567'), 'Params.password must be at least 8 characters'],
    [bulkBody('v.example', '', 2), 'Email_fullname must not be empty'],
    [bulkBody('v.example', '*** ---', 2), 'Email_fullname must contain letters or digits to derive addresses from'],
    [{ ...ok, single_bulk: 'single' }, 'single_bulk must be "bulk"'],
    [bulkBody('https://v.example', 'Ann Smith', 2), 'Domain must not include a scheme'],
  ];
  for (const [b, reason] of cases) {
    const r = await app.post('/v1/create/mailbox/bulk', key, b);
    t.is(r.status, 422, reason);
    t.deepEqual(r.body, { status: 'error', reason });
  }
  t.is((await app.app.db.selectFrom('mailboxes').select('id').execute()).length, 0);
});

test('mailbox slots are enforced before enqueue and again inside the task', async (t) => {
  const clock = manualClock();
  const app = await startTestApp(t, { clock });
  const key = await app.keyFor();
  await domain(app, key, 'slots.example', { total_mailbox_allowed: 3 });

  const tooMany = await app.post('/v1/create/mailbox/bulk', key, bulkBody('slots.example', 'Ann Smith', 4));
  t.is(tooMany.status, 422);
  t.deepEqual(tooMany.body, { status: 'error', reason: 'Only 3 of 3 mailbox slots left on slots.example; this request needs 4' });
  t.is((await bulkMailboxes(app, key, 'slots.example', 'Ann Smith', 2)).body.total_email, 2);
  clock.advance(FIVE_MINUTES);
  const left1 = await app.post('/v1/create/mailbox/bulk', key, bulkBody('slots.example', 'Bob Jones', 2));
  t.deepEqual(left1.body, { status: 'error', reason: 'Only 1 of 3 mailbox slots left on slots.example; this request needs 2' });
  // Addresses that exist need no slot: the first two candidates of Ann Smith plus one new one fit.
  t.is((await bulkMailboxes(app, key, 'slots.example', 'Ann Smith', 3)).body.total_email, 1);
  const full = await app.post('/v1/create/mailbox/single', key, { Email_fullname: 'X', single_bulk: 'single', Domain: 'slots.example', Params: { email_id: 'x@slots.example', password: 0 } });
  t.is(full.status, 422);
  t.deepEqual(full.body, { status: 'error', reason: 'No mailbox slots left on slots.example (all 3 are used)' });

  // Inside the task: the slots are taken after the request was accepted.
  await domain(app, key, 'race.example', { total_mailbox_allowed: 2 });
  const { tenantId, keyId } = await whoIs(app, key);
  const domainId = (await app.app.domains.store.byHostname(app.app.db, 'race.example'))!.id;
  const taskId = await app.app.db.transaction().execute(async (trx) => {
    await app.app.tenants.markCooldown(trx, 'mailbox-bulk', keyId, 'race.example');
    const id = await app.app.queue.enqueue(trx, {
      kind: 'mailbox.bulk', tenantId, keyId, domain: 'race.example',
      payload: { domainId, addresses: ['a@race.example', 'b@race.example'], displayName: 'A', password: 0 },
    });
    await app.app.mailboxes.store.insert(trx, [{ tenant_id: tenantId, domain_id: domainId, address: 'z@race.example', display_name: '', password_hash: 'x', created_at: 0 }]);
    return id;
  });
  const failed = await app.pollTask('/v1/get/mailbox/bulk', key, taskId, TASK_WAIT_MS);
  t.is(failed.status, 422);
  t.deepEqual(failed.body, { status: 'error', reason: 'Only 1 of 2 mailbox slots left on race.example; this request needs 2' });
  t.is(await mailboxRow(app, 'a@race.example'), undefined);
  // The failed run gave its cooldown back.
  t.is((await app.post('/v1/create/mailbox/bulk', key, bulkBody('race.example', 'Ann', 1))).status, 200);
});

test('a 100-mailbox bulk with generated passwords completes (time logged)', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'hundred.example');
  const started = Date.now();
  const task = await bulkMailboxes(app, key, 'hundred.example', 'Ann Lee Smith', 100, 0);
  const ms = Date.now() - started;
  t.is(task.body.total_email, 100);
  t.is(Object.keys(task.body.results).length, 100);
  t.log(`100-mailbox bulk task: ${ms} ms (its bound is the timing lane's: test/timing/mailbox-bulk.test.ts)`);
});
