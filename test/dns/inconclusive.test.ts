import test from 'ava';
import { createDnsChecker } from '../../src/dns/checker.js';
import { createResolver } from '../../src/dns/resolver.js';
import { createDnsStore } from '../../src/dns/store.js';
import { checkNow, createDomain, dnsApp, listedStatus, type ApiRecord } from './setup.js';
import { startBlackHole } from './zone.js';

const statuses = (records: ApiRecord[]) => records.map((r) => r.status);

test('SERVFAIL and REFUSED leave a verified domain and its records as they were', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const core = app.app;
  const { taskId, records } = await createDomain(app, key, 'example.org');
  zone.publish(records);
  t.is((await checkNow(app, key, 'example.org')).body.results.status, 'verified');

  // More than the three failures that would unverify it, had they counted.
  for (const mode of ['servfail', 'servfail', 'refused', 'servfail'] as const) {
    zone.setMode(mode);
    const done = await checkNow(app, key, 'example.org');
    t.is(done.status, 422);
    t.is(done.body.status, 'error');
    t.regex(done.body.reason, mode === 'servfail' ? /inconclusive \(ESERVFAIL/ : /inconclusive \(EREFUSED/);
    t.regex(done.body.reason, /statuses are unchanged/);
  }
  t.is(core.dns.checker.failureStreak(), 1, 'one hostname failing again and again counts once');
  t.is(await listedStatus(app, key, 'example.org'), 'verified');
  const created = await app.get(`/v1/get/domain?task_id=${taskId}`, key);
  t.is(created.body.results.status, 'verified');
  t.deepEqual(statuses(created.body.results.records), Array(11).fill('verified'));

  // Counting starts from a real failure only, and answers again are used at once.
  zone.setMode('answer');
  t.is((await checkNow(app, key, 'example.org')).body.results.status, 'verified');
  t.is(core.dns.checker.failureStreak(), 0);
});

test('SERVFAIL leaves a new domain\'s records "Not checked"', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { taskId } = await createDomain(app, key, 'example.org');
  zone.setMode('servfail');
  t.is((await checkNow(app, key, 'example.org')).status, 422);
  const created = await app.get(`/v1/get/domain?task_id=${taskId}`, key);
  t.is(created.body.results.status, 'pending');
  t.deepEqual(statuses(created.body.results.records), Array(11).fill('Not checked'));
});

test('a resolver that never answers times out and changes nothing', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { taskId, records } = await createDomain(app, key, 'example.org');
  zone.publish(records);
  t.is((await checkNow(app, key, 'example.org')).body.results.status, 'verified');

  // The same checker as the app's, over the app's database, asking a server that never answers.
  const hole = await startBlackHole(t);
  const core = app.app;
  const checker = createDnsChecker({
    db: core.db, store: createDnsStore(), clock: core.clock, logger: core.logger,
    queries: createResolver({ servers: [`127.0.0.1:${hole.port}`], timeoutMs: 200, tries: 1 }),
    recordsView: core.domains.store.records,
  });
  zone.clear();
  for (let n = 0; n < 3; n++) {
    const outcome = await checker.check('example.org');
    t.is(outcome.kind, 'inconclusive');
    if (outcome.kind === 'inconclusive') t.regex(outcome.reason, /inconclusive \(ETIMEOUT/);
  }
  t.true(hole.received() > 0);
  t.is(await listedStatus(app, key, 'example.org'), 'verified');
  const created = await app.get(`/v1/get/domain?task_id=${taskId}`, key);
  t.deepEqual(statuses(created.body.results.records), Array(11).fill('verified'));

  // The same checker against the live zone does conclude (the empty zone is a real failure).
  const live = createDnsChecker({
    db: core.db, store: createDnsStore(), clock: core.clock, logger: core.logger,
    queries: createResolver({ servers: [`127.0.0.1:${zone.port}`], timeoutMs: 1000, tries: 2 }),
    recordsView: core.domains.store.records,
  });
  const outcome = await live.check('example.org');
  t.is(outcome.kind, 'checked');
  if (outcome.kind === 'checked') t.deepEqual(statuses(outcome.result.records), Array(11).fill('missing'));
});

test('an unreachable resolver (connection refused) is inconclusive too', async (t) => {
  const { app, key } = await dnsApp(t);
  await createDomain(app, key, 'example.org');
  const core = app.app;
  const checker = createDnsChecker({
    db: core.db, store: createDnsStore(), clock: core.clock, logger: core.logger,
    queries: createResolver({ servers: ['127.0.0.1:1'], timeoutMs: 300, tries: 1 }),
    recordsView: core.domains.store.records,
  });
  const outcome = await checker.check('example.org');
  t.is(outcome.kind, 'inconclusive');
  t.is(await listedStatus(app, key, 'example.org'), 'pending');
});
