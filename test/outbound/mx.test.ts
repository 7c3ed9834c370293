import test from 'ava';
import { isForbiddenTarget, resolveDeliveryTargets, TemporaryDnsError } from '../../src/outbound/mx.js';
import { startMxZone } from './mx-zone.js';

test('MX hosts by preference, each with its A then AAAA addresses', async (t) => {
  const zone = await startMxZone(t);
  zone.mx('dest.test', 'backup.dest.test', 20);
  zone.mx('dest.test', 'mx1.dest.test', 10);
  zone.a('mx1.dest.test', '192.0.2.10');
  zone.aaaa('mx1.dest.test', '2001:db8::10');
  zone.a('mx1.dest.test', '192.0.2.11');
  zone.a('backup.dest.test', '198.51.100.20');
  const targets = await resolveDeliveryTargets('Dest.Test.', zone.resolver());
  t.deepEqual(targets, {
    kind: 'hosts',
    hosts: [
      { host: 'mx1.dest.test', preference: 10, addresses: ['192.0.2.10', '192.0.2.11', '2001:db8::10'] },
      { host: 'backup.dest.test', preference: 20, addresses: ['198.51.100.20'] },
    ],
  });
});

test('hosts of equal preference come in both orders (shuffled)', async (t) => {
  const zone = await startMxZone(t);
  zone.mx('tie.test', 'a.tie.test', 10);
  zone.mx('tie.test', 'b.tie.test', 10);
  zone.a('a.tie.test', '192.0.2.1');
  zone.a('b.tie.test', '192.0.2.2');
  const resolver = zone.resolver();
  const firsts = new Set<string>();
  for (let i = 0; i < 40 && firsts.size < 2; i++) {
    const targets = await resolveDeliveryTargets('tie.test', resolver);
    if (targets.kind !== 'hosts') return t.fail('expected hosts');
    t.is(targets.hosts.length, 2);
    firsts.add(targets.hosts[0].host);
  }
  t.deepEqual([...firsts].sort(), ['a.tie.test', 'b.tie.test']);
});

test('no MX: the domain itself is the implicit MX (preference 0)', async (t) => {
  const zone = await startMxZone(t);
  zone.a('plain.test', '203.0.113.5');
  zone.aaaa('plain.test', '2001:db8::5');
  t.deepEqual(await resolveDeliveryTargets('plain.test', zone.resolver()), {
    kind: 'hosts',
    hosts: [{ host: 'plain.test', preference: 0, addresses: ['203.0.113.5', '2001:db8::5'] }],
  });
});

test('null MX "." is null-mx; mixed with real hosts the real ones are used', async (t) => {
  const zone = await startMxZone(t);
  zone.mx('nomail.test', '.', 0);
  zone.a('nomail.test', '192.0.2.9'); // an address does not matter once the null MX says no mail
  t.deepEqual(await resolveDeliveryTargets('nomail.test', zone.resolver()), { kind: 'null-mx' });

  zone.mx('mixed.test', '.', 0);
  zone.mx('mixed.test', 'mx.mixed.test', 10);
  zone.a('mx.mixed.test', '192.0.2.30');
  const mixed = await resolveDeliveryTargets('mixed.test', zone.resolver());
  t.deepEqual(mixed, { kind: 'hosts', hosts: [{ host: 'mx.mixed.test', preference: 10, addresses: ['192.0.2.30'] }] });
});

test('NXDOMAIN, a name without MX or address, and MX hosts that do not exist are no-host', async (t) => {
  const zone = await startMxZone(t);
  t.deepEqual(await resolveDeliveryTargets('missing.test', zone.resolver()), { kind: 'no-host' });
  zone.empty('bare.test');
  t.deepEqual(await resolveDeliveryTargets('bare.test', zone.resolver()), { kind: 'no-host' });
  zone.mx('dangling.test', 'gone.dangling.test', 10);
  t.deepEqual(await resolveDeliveryTargets('dangling.test', zone.resolver()), { kind: 'no-host' });
});

test('SERVFAIL or a silent server is a TemporaryDnsError', async (t) => {
  const zone = await startMxZone(t);
  zone.servfail('broken.test');
  const servfail = await t.throwsAsync(resolveDeliveryTargets('broken.test', zone.resolver()), { instanceOf: TemporaryDnsError });
  t.is(servfail?.code, 'ESERVFAIL');
  zone.silence('slow.test');
  const timeout = await t.throwsAsync(resolveDeliveryTargets('slow.test', zone.resolver(300)), { instanceOf: TemporaryDnsError });
  t.is(timeout?.code, 'ETIMEOUT');
});

test('an MX host that cannot be looked up is skipped when another can; all failing is temporary', async (t) => {
  const zone = await startMxZone(t);
  zone.mx('half.test', 'bad.half.test', 10);
  zone.mx('half.test', 'good.half.test', 20);
  zone.servfail('bad.half.test');
  zone.a('good.half.test', '192.0.2.40');
  t.deepEqual(await resolveDeliveryTargets('half.test', zone.resolver()), {
    kind: 'hosts', hosts: [{ host: 'good.half.test', preference: 20, addresses: ['192.0.2.40'] }],
  });
  zone.mx('down.test', 'bad.half.test', 10);
  await t.throwsAsync(resolveDeliveryTargets('down.test', zone.resolver()), { instanceOf: TemporaryDnsError });
  // Implicit MX whose address lookup fails is temporary too.
  zone.servfail('flaky.test');
  await t.throwsAsync(resolveDeliveryTargets('flaky.test', zone.resolver()), { instanceOf: TemporaryDnsError });
});

test('isForbiddenTarget: private, special and own addresses are refused; public unicast passes', (t) => {
  const own = new Set(['93.184.216.34', '2A01:4F8:0:0::7']);
  const forbidden = [
    '127.0.0.1', '127.8.9.10', '::1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1',
    'fd00::1', 'fc00::1', 'fd00:ec2::254', '169.254.169.254', 'fe80::1', '100.64.0.1', '100.100.100.200',
    '0.0.0.0', '::', '224.0.0.1', 'ff02::1', '255.255.255.255', '::ffff:127.0.0.1', '::ffff:10.0.0.1',
    '192.0.2.1', '198.51.100.7', '2001:db8::1', '93.184.216.34', '::ffff:93.184.216.34', '2a01:4f8::7', 'not-an-ip', '',
  ];
  for (const ip of forbidden) t.true(isForbiddenTarget(ip, own), ip);
  for (const ip of ['8.8.8.8', '1.1.1.1', '2a00:1450:4001:81b::200e', '::ffff:8.8.4.4', '172.32.0.1', '100.128.0.1']) {
    t.false(isForbiddenTarget(ip, own), ip);
  }
});
