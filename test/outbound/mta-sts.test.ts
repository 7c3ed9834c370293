import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { generate } from 'selfsigned';
import { createMtaSts, type MtaStsPolicy } from '../../src/outbound/mta-sts.js';
import { startMxZone } from './mx-zone.js';

/** A test CA and a certificate it issued for mta-sts.dest.test (made once per test file). */
const pki = (async () => {
  const ca = await generate([{ name: 'commonName', value: 'Mailstead Test CA' }], {
    keySize: 2048, algorithm: 'sha256',
    extensions: [{ name: 'basicConstraints', cA: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true }],
  });
  const leaf = await generate([{ name: 'commonName', value: 'mta-sts.dest.test' }], {
    keySize: 2048, algorithm: 'sha256', ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'mta-sts.dest.test' }] },
    ],
  });
  return { ca: ca.cert, key: leaf.private, cert: leaf.cert };
})();

const ENFORCE = 'version: STSv1\r\nmode: enforce\r\nmx: mx1.dest.test\r\nmx: *.backup.dest.test\r\nmax_age: 86400\r\n';

interface Served { status: number; type: string; body: string; location?: string }

/** The policy web server (HTTPS on 127.0.0.1) plus DNS pointing mta-sts.<domain> at it; answers what `served` says. */
async function world(t: ExecutionContext) {
  const { ca, key, cert } = await pki;
  let served: Served = { status: 200, type: 'text/plain; charset=utf-8', body: ENFORCE };
  const requests: string[] = [];
  const server = createServer({ key, cert }, (req, res) => {
    requests.push(`${req.headers.host} ${req.url}`);
    res.writeHead(served.status, { 'content-type': served.type, ...(served.location ? { location: served.location } : {}) });
    res.end(served.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const zone = await startMxZone(t);
  zone.txt('_mta-sts.dest.test', 'v=STSv1; id=20261126a;');
  zone.a('mta-sts.dest.test', '127.0.0.1');
  let now = new Date('2026-11-26T04:00:00Z');
  const clock = {
    now: () => now,
    advance(seconds: number) { now = new Date(now.getTime() + seconds * 1000); },
  };
  const port = (server.address() as AddressInfo).port;
  const sts = createMtaSts({ resolver: zone.resolver(), now: clock.now, httpsPort: port, ca, timeoutMs: 5000 });
  return { zone, sts, clock, requests, port, ca, serve(s: Partial<Served>) { served = { ...served, ...s }; } };
}

test('fetches and parses the policy over HTTPS with the certificate checked, then serves it from the cache', async (t) => {
  const w = await world(t);
  const policy = await w.sts.policy('Dest.Test.');
  t.deepEqual(policy, { id: '20261126a', mode: 'enforce', mx: ['mx1.dest.test', '*.backup.dest.test'], maxAge: 86400 });
  t.deepEqual(w.requests, ['mta-sts.dest.test /.well-known/mta-sts.txt']);
  w.clock.advance(3600);
  t.deepEqual(await w.sts.policy('dest.test'), policy);
  t.is(w.requests.length, 1);
});

test('concurrent lookups share one fetch', async (t) => {
  const w = await world(t);
  const all = await Promise.all(Array.from({ length: 8 }, () => w.sts.policy('dest.test')));
  t.true(all.every((p) => p?.mode === 'enforce'));
  t.is(w.requests.length, 1);
});

test('a new TXT id refetches; an expired max_age refetches under the same id', async (t) => {
  const w = await world(t);
  await w.sts.policy('dest.test');
  w.serve({ body: ENFORCE.replace('mode: enforce', 'mode: testing') });
  w.zone.remove('_mta-sts.dest.test');
  w.zone.txt('_mta-sts.dest.test', 'v=STSv1; id=20261126b');
  t.like(await w.sts.policy('dest.test'), { id: '20261126b', mode: 'testing' });
  t.is(w.requests.length, 2);
  w.serve({ body: ENFORCE.replace('max_age: 86400', 'max_age: 600') });
  w.clock.advance(86401);
  t.like(await w.sts.policy('dest.test'), { id: '20261126b', mode: 'enforce', maxAge: 600 });
  t.is(w.requests.length, 3);
});

test('no TXT record: no policy; a cached policy still applies until it expires when the record goes away', async (t) => {
  const w = await world(t);
  t.is(await w.sts.policy('elsewhere.test'), null);
  t.truthy(await w.sts.policy('dest.test'));
  w.zone.remove('_mta-sts.dest.test');
  w.clock.advance(86000);
  t.like(await w.sts.policy('dest.test'), { mode: 'enforce' });
  w.clock.advance(401);
  t.is(await w.sts.policy('dest.test'), null);
});

test('DNS failure: the cached policy applies, or none', async (t) => {
  const w = await world(t);
  await w.sts.policy('dest.test');
  w.zone.servfail('_mta-sts.dest.test');
  t.like(await w.sts.policy('dest.test'), { mode: 'enforce' });
  w.zone.servfail('_mta-sts.other.test');
  t.is(await w.sts.policy('other.test'), null);
});

test('a failed fetch gives no policy, or keeps the cached one; a failed id is not refetched for a minute', async (t) => {
  const w = await world(t);
  w.serve({ status: 404, type: 'text/plain', body: 'not here' });
  t.is(await w.sts.policy('dest.test'), null);
  t.is(await w.sts.policy('dest.test'), null);
  t.is(w.requests.length, 1);
  w.serve({ status: 200, body: ENFORCE });
  w.clock.advance(61);
  t.like(await w.sts.policy('dest.test'), { mode: 'enforce' });

  // A new id whose policy cannot be fetched: the cached policy keeps applying.
  w.zone.remove('_mta-sts.dest.test');
  w.zone.txt('_mta-sts.dest.test', 'v=STSv1; id=broken1');
  w.serve({ status: 500 });
  t.like(await w.sts.policy('dest.test'), { id: '20261126a', mode: 'enforce' });
});

test('refused answers: redirect, wrong media type, oversized or invalid policy, several STS records', async (t) => {
  const w = await world(t);
  const cases: Array<[string, Partial<Served>]> = [
    ['redirect', { status: 301, type: 'text/plain', body: '', location: 'https://mta-sts.dest.test/other.txt' }],
    ['media type', { status: 200, type: 'text/html', body: ENFORCE }],
    ['too large', { status: 200, type: 'text/plain', body: ENFORCE + `x: ${'y'.repeat(70_000)}\r\n` }],
    ['no mx in enforce', { status: 200, type: 'text/plain', body: 'version: STSv1\r\nmode: enforce\r\nmax_age: 100\r\n' }],
    ['bad version', { status: 200, type: 'text/plain', body: ENFORCE.replace('STSv1', 'STSv2') }],
    ['no max_age', { status: 200, type: 'text/plain', body: 'version: STSv1\r\nmode: testing\r\nmx: a.dest.test\r\n' }],
  ];
  for (const [what, served] of cases) {
    w.serve(served);
    w.clock.advance(120); // past the fetch-failure pause of the previous case
    t.is(await w.sts.policy('dest.test'), null, what);
  }
  w.serve({ status: 200, type: 'text/plain', body: ENFORCE, location: undefined });
  w.zone.txt('_mta-sts.dest.test', 'v=STSv1; id=second');
  w.clock.advance(120);
  t.is(await w.sts.policy('dest.test'), null, 'two STS records');
});

test('the certificate must be valid for mta-sts.<domain> and issued by a trusted CA', async (t) => {
  const w = await world(t);
  // other.test's policy host is the same server, whose certificate names mta-sts.dest.test only.
  w.zone.txt('_mta-sts.other.test', 'v=STSv1; id=1');
  w.zone.a('mta-sts.other.test', '127.0.0.1');
  t.is(await w.sts.policy('other.test'), null);
  // Without the test CA the public roots do not trust the certificate.
  const untrusting = createMtaSts({ resolver: w.zone.resolver(), now: w.clock.now, httpsPort: w.port, timeoutMs: 5000 });
  t.is(await untrusting.policy('dest.test'), null);
  // Refused addresses are not fetched from.
  const refusing = createMtaSts({ resolver: w.zone.resolver(), now: w.clock.now, httpsPort: w.port, ca: w.ca, refuseAddress: (ip) => ip === '127.0.0.1' });
  t.is(await refusing.policy('dest.test'), null);
  t.is(w.requests.filter((r) => r.startsWith('mta-sts.dest.test')).length, 0);
});

test('mxAllowed: exact names and one-label wildcards, case and trailing dot ignored', (t) => {
  const sts = createMtaSts({ resolver: undefined as never, now: () => new Date() });
  const policy: MtaStsPolicy = { id: '1', mode: 'enforce', mx: ['mx1.dest.test', '*.backup.dest.test'], maxAge: 60 };
  for (const yes of ['mx1.dest.test', 'MX1.Dest.Test.', 'a.backup.dest.test', 'B.BACKUP.dest.test']) t.true(sts.mxAllowed(policy, yes), yes);
  for (const no of ['mx2.dest.test', 'backup.dest.test', 'a.b.backup.dest.test', 'xbackup.dest.test', 'mx1.dest.test.evil', '']) t.false(sts.mxAllowed(policy, no), no);
});
