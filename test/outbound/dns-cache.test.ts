import test from 'ava';
import { cachingResolver } from '../../src/outbound/dns-cache.js';
import { resolveDeliveryTargets } from '../../src/outbound/mx.js';
import { startMxZone } from './mx-zone.js';

const count = (queries: string[], entry: string) => queries.filter((q) => q === entry).length;

test('concurrent deliveries share one lookup per question, and the answers are reused until the hold runs out', async (t) => {
  const zone = await startMxZone(t);
  zone.mx('dest.test', 'mx.dest.test', 10);
  zone.a('mx.dest.test', '192.0.2.10');
  let now = 1_000;
  const resolver = cachingResolver(zone.resolver(), 5_000, () => now);

  const burst = await Promise.all(Array.from({ length: 10 }, () => resolveDeliveryTargets('dest.test', resolver)));
  for (const targets of burst) t.deepEqual(targets, { kind: 'hosts', hosts: [{ host: 'mx.dest.test', preference: 10, addresses: ['192.0.2.10'] }] });
  // DNS type codes: MX 15, A 1.
  t.is(count(zone.queries, '15 dest.test'), 1);
  t.is(count(zone.queries, '1 mx.dest.test'), 1);

  now += 4_999;
  await resolveDeliveryTargets('dest.test', resolver);
  t.is(count(zone.queries, '15 dest.test'), 1);

  // A changed zone is seen once the hold has run out.
  zone.a('mx.dest.test', '192.0.2.11');
  now += 2;
  t.deepEqual(await resolveDeliveryTargets('dest.test', resolver), {
    kind: 'hosts', hosts: [{ host: 'mx.dest.test', preference: 10, addresses: ['192.0.2.10', '192.0.2.11'] }],
  });
  t.is(count(zone.queries, '15 dest.test'), 2);
});

test('an absent record is kept for the hold like an answer (a record added since is seen once it runs out); failures are not kept', async (t) => {
  const zone = await startMxZone(t);
  let now = 0;
  const resolver = cachingResolver(zone.resolver(), 60_000, () => now);
  await t.throwsAsync(resolver.resolveMx('late.test'), { code: 'ENOTFOUND' });
  zone.mx('late.test', 'mx.late.test', 10);
  await t.throwsAsync(resolver.resolveMx('late.test'), { code: 'ENOTFOUND' });
  t.is(count(zone.queries, '15 late.test'), 1);
  now += 60_001;
  t.deepEqual(await resolver.resolveMx('late.test'), [{ exchange: 'mx.late.test', priority: 10 }]);

  zone.servfail('broken.test');
  await t.throwsAsync(resolver.resolveTxt('broken.test'), { code: 'ESERVFAIL' });
  await t.throwsAsync(resolver.resolveTxt('broken.test'), { code: 'ESERVFAIL' });
  t.is(count(zone.queries, '16 broken.test'), 2);
});
