import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { DNS_CRON_JOB } from '../../src/dns/index.js';
import { createDnsService } from '../../src/dns/service.js';
import { createDnsStore } from '../../src/dns/store.js';
import { isDue, pickDue, type ScheduleRow } from '../../src/dns/schedule.js';
import { createDomain, dnsApp } from './setup.js';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const DAY = 24 * H;
const T0 = Date.UTC(2030, 0, 1);

const row = (o: Partial<ScheduleRow>): ScheduleRow => ({ hostname: 'a.test', status: 'pending', createdAt: T0, lastCheckedAt: null, ...o });

test('pending: at once, then every minute during the first hour, then hourly', (t) => {
  t.true(isDue(row({}), T0));
  const checked = row({ lastCheckedAt: T0 });
  t.false(isDue(checked, T0 + 30 * S));
  t.true(isDue(checked, T0 + MIN));
  t.true(isDue(row({ lastCheckedAt: T0 + 58 * MIN }), T0 + 59 * MIN));
  // From the hour mark on, the last check's hour counts.
  t.false(isDue(row({ lastCheckedAt: T0 + 59 * MIN }), T0 + 60 * MIN));
  t.true(isDue(row({ lastCheckedAt: T0 + 59 * MIN }), T0 + 119 * MIN));
  const afterHour = row({ lastCheckedAt: T0 + 61 * MIN });
  t.false(isDue(afterHour, T0 + 62 * MIN));
  t.false(isDue(afterHour, T0 + 90 * MIN));
  t.true(isDue(afterHour, T0 + 121 * MIN));
});

test('verified: daily; unverified: hourly; other statuses: never', (t) => {
  const v = row({ status: 'verified', lastCheckedAt: T0 + H });
  t.false(isDue(v, T0 + 2 * H));
  t.false(isDue(v, T0 + 20 * H));
  t.true(isDue(v, T0 + H + DAY));
  const u = row({ status: 'unverified', lastCheckedAt: T0 + DAY });
  t.false(isDue(u, T0 + DAY + 30 * MIN));
  t.true(isDue(u, T0 + DAY + H));
  t.false(isDue(row({ status: 'suspended' }), T0 + 10 * DAY));
});

test('pickDue skips busy hostnames, takes the most overdue first, and stops at the limit', (t) => {
  const rows = [
    row({ hostname: 'fresh.test', createdAt: T0 + 10 * MIN }),
    row({ hostname: 'busy.test' }),
    row({ hostname: 'old.test', status: 'verified', lastCheckedAt: T0 - 3 * DAY }),
    row({ hostname: 'notdue.test', status: 'verified', lastCheckedAt: T0 + 5 * MIN }),
    row({ hostname: 'hourly.test', status: 'unverified', lastCheckedAt: T0 - H }),
  ];
  const now = T0 + 11 * MIN;
  const names = (limit: number) => pickDue(rows, now, { limit, busy: new Set(['busy.test']) }).map((r) => r.hostname);
  t.deepEqual(names(10), ['old.test', 'hourly.test', 'fresh.test']);
  t.deepEqual(names(2), ['old.test', 'hourly.test']);
  t.deepEqual(names(0), []);
});

test('the cron job enqueues due checks by the injected clock', async (t) => {
  const clock = manualClock(T0);
  const { zone, app, key } = await dnsApp(t, { clock });
  const core = app.app;

  const lastChecked = async (host: string) =>
    (await core.db.selectFrom('domains').select('last_checked_at').where('hostname', '=', host).executeTakeFirstOrThrow()).last_checked_at;
  const checkTasks = async () =>
    (await core.db.selectFrom('tasks').select(['domain', 'status', 'key_id']).where('kind', '=', 'domain.check').orderBy('id').execute());
  /** One cron tick at the clock's now; waits until the checks it enqueued have run. */
  async function tick(): Promise<string[]> {
    const before = (await checkTasks()).length;
    await core.cron.run(DNS_CRON_JOB);
    const tasks = await checkTasks();
    const deadline = Date.now() + 10_000;
    while ((await checkTasks()).some((x) => x.status === 'queued' || x.status === 'running')) {
      if (Date.now() > deadline) throw new Error('checks did not finish');
      await new Promise((r) => setTimeout(r, 10));
    }
    return tasks.slice(before).map((x) => x.domain);
  }

  const { records } = await createDomain(app, key, 'example.org');
  t.deepEqual(await tick(), ['example.org']); // never checked: at once
  t.is(await lastChecked('example.org'), T0);
  t.true((await checkTasks()).every((x) => x.key_id === null && x.status === 'completed'));
  t.deepEqual(await tick(), []);

  clock.advance(30 * S);
  t.deepEqual(await tick(), []);
  clock.advance(30 * S);
  t.deepEqual(await tick(), ['example.org']); // a minute later
  t.is(await lastChecked('example.org'), T0 + MIN);

  // Past the first hour, a pending domain is checked hourly.
  clock.set(T0 + 2 * H);
  t.deepEqual(await tick(), ['example.org']);
  clock.set(T0 + 2 * H + 30 * MIN);
  t.deepEqual(await tick(), []);
  clock.set(T0 + 3 * H);
  zone.publish(records);
  t.deepEqual(await tick(), ['example.org']);
  const list = await app.get('/v1/list/domain', key);
  t.is(list.body.results['example.org'].status, 'verified');

  // Verified: daily.
  clock.set(T0 + 3 * H + 2 * H);
  t.deepEqual(await tick(), []);
  clock.set(T0 + 3 * H + 23 * H);
  t.deepEqual(await tick(), []);
  clock.set(T0 + 3 * H + DAY);
  t.deepEqual(await tick(), ['example.org']);

  // A hostname with a check still queued gets no second one.
  await core.db.transaction().execute((trx) =>
    core.queue.enqueue(trx, { kind: 'domain.check', tenantId: null, keyId: null, domain: 'example.org', runAfter: T0 + 100 * DAY }));
  clock.set(T0 + 10 * DAY);
  await core.cron.run(DNS_CRON_JOB);
  t.is((await checkTasks()).filter((x) => x.status === 'queued').length, 1);
});

test('a tick tops open checks up to the cap, most overdue first', async (t) => {
  const clock = manualClock(T0);
  const { app, key } = await dnsApp(t, { clock });
  const core = app.app;
  for (const h of ['a.example', 'b.example', 'c.example']) {
    await createDomain(app, key, h);
    clock.advance(S);
  }
  const capped = createDnsService({
    db: core.db, store: createDnsStore(), domainStore: core.domains.store, queue: core.queue, clock, logger: core.logger,
    limits: { perTick: 2, maxOpen: 2, failureStreak: 5 }, failureStreak: () => 0,
  });
  const settled = async () => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const open = await core.db.selectFrom('tasks').select('domain').where('kind', '=', 'domain.check')
        .where('status', 'in', ['queued', 'running']).where('run_after', '<=', clock.now()).execute();
      if (open.length === 0) return;
      if (Date.now() > deadline) throw new Error('checks did not finish');
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  // One check of another hostname is queued for later: it takes one of the two open slots.
  await core.db.transaction().execute((trx) =>
    core.queue.enqueue(trx, { kind: 'domain.check', tenantId: null, keyId: null, domain: 'elsewhere.example', runAfter: T0 + DAY }));
  t.deepEqual(await capped.enqueueDue(), ['a.example']);
  await settled();
  t.deepEqual(await capped.enqueueDue(), ['b.example']);
  await settled();
  t.deepEqual(await capped.enqueueDue(), ['c.example']);
  await settled();
  t.deepEqual(await capped.enqueueDue(), []);
});

test('while checks keep failing to conclude, a tick enqueues a single probe', async (t) => {
  const clock = manualClock(T0);
  const { app, key } = await dnsApp(t, { clock });
  const core = app.app;
  for (const h of ['a.example', 'b.example', 'c.example']) await createDomain(app, key, h);
  let streak = 5;
  const service = createDnsService({
    db: core.db, store: createDnsStore(), domainStore: core.domains.store, queue: core.queue, clock, logger: core.logger,
    limits: { perTick: 25, maxOpen: 25, failureStreak: 5 }, failureStreak: () => streak,
  });
  t.deepEqual(await service.enqueueDue(), ['a.example']);
  // A conclusive check resets the streak; the rest follow at once (a.example is checked or busy).
  streak = 0;
  t.deepEqual(await service.enqueueDue(), ['b.example', 'c.example']);
});
