import test from 'ava';
import { checkNow, createDomain, dnsApp } from './setup.js';

test('checks of a zone that never answers delay no other tenant\'s provisioning', async (t) => {
  const { zone, app, key: keyA } = await dnsApp(t);
  const keyB = await app.keyFor();
  await createDomain(app, keyB, 'calm.test');
  const dead = Array.from({ length: 10 }, (_, i) => `dead${i}.test`);
  for (const host of dead) await createDomain(app, keyA, host);
  for (const host of dead) zone.silence(host);

  // Each of these waits for the resolver's timeouts (2 s, 2 tries), more than the worker's slots.
  const asked = Date.now();
  const checks = await Promise.all(dead.map((host) => app.post(`/v1/domains/${host}/check`, keyA)));
  for (const c of checks) t.is(c.status, 200);

  const box = await app.post('/v1/create/mailbox/single', keyB, {
    Email_fullname: 'Calm Inbox', single_bulk: 'single', Domain: 'calm.test', Params: { email_id: 'inbox@calm.test', password: 0 },
  });
  t.is(box.status, 200);
  const created = await app.pollTask('/v1/get/mailbox/single', keyB, box.body.task_id);
  const tookMs = Date.now() - asked;
  t.is(created.body.status, 'completed');

  const polls = await Promise.all(checks.map((c) => app.pollTask('/v1/get/domain', keyA, c.body.task_id)));
  const checksMs = Date.now() - asked;
  for (const p of polls) t.regex(p.body.reason, /inconclusive \(ETIMEOUT/);
  t.true(checksMs > tookMs, 'the mailbox did not wait for the checks');
});

test('hostnames that keep failing count once toward the resolver-down streak', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const core = app.app;
  const broken = Array.from({ length: 6 }, (_, i) => `broken${i}.test`);
  for (const host of broken) await createDomain(app, key, host);
  const { records } = await createDomain(app, key, 'fine.test');
  zone.publish(records);
  for (const host of broken) zone.failUnder(host);

  for (const host of broken) t.is((await checkNow(app, key, host)).status, 422);
  t.is(core.dns.checker.failureStreak(), 6, 'six hostnames failing in a row look like a resolver outage');
  t.is((await checkNow(app, key, 'fine.test')).body.results.status, 'verified');
  t.is(core.dns.checker.failureStreak(), 0);

  // The same broken zones checked again: no new evidence against the resolver.
  for (const host of broken) t.is((await checkNow(app, key, host)).status, 422);
  t.is(core.dns.checker.failureStreak(), 0);
});
