import test from 'ava';
import { checkNow, createDomain, dnsApp, listedStatus, statusByRecord } from './setup.js';

test('all records published: every record and the domain become verified, on the check and the create poll', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { taskId, records } = await createDomain(app, key, 'example.org');
  zone.publish(records);

  const r = await app.post('/v1/domains/example.org/check', key);
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ['domain', 'status', 'task_id']);
  t.is(r.body.status, 'success');
  t.is(r.body.domain, 'example.org');
  t.true(Number.isInteger(r.body.task_id));

  const done = await app.pollTask('/v1/get/domain', key, r.body.task_id);
  t.is(done.status, 200);
  t.is(done.body.status, 'completed');
  t.is(done.body.domain, 'example.org');
  t.is(done.body.total_email, 0);
  t.is(done.body.results.domain, 'example.org');
  t.is(done.body.results.status, 'verified');
  t.is(done.body.results.records.length, 11);
  t.true(done.body.results.records.every((x: { status: string }) => x.status === 'verified'));
  t.deepEqual(done.body.results.records.map((x: any) => [x.type, x.name, x.value, x.priority]), records.map((x) => [x.type, x.name, x.value, x.priority]));

  // The create task's poll shows the records as they are now.
  const created = await app.get(`/v1/get/domain?task_id=${taskId}`, key);
  t.is(created.body.results.status, 'verified');
  t.true(created.body.results.records.every((x: { status: string }) => x.status === 'verified'));
  t.is(await listedStatus(app, key, 'example.org'), 'verified');
  t.true(zone.queries.includes('MX example.org') && zone.queries.includes('TXT _mailstead.example.org'));
  t.true(zone.queries.includes('SRV _imaps._tcp.example.org') && zone.queries.includes('CNAME autoconfig.example.org'));
});

test('a wrong verification token is a mismatch and the domain stays pending', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { records } = await createDomain(app, key, 'example.org');
  zone.publish(records.filter((r) => r.name !== '_mailstead.example.org'));
  zone.txt('_mailstead.example.org', 'mailstead-verification=00000000000000000000000000000000');
  zone.txt('_mailstead.example.org', 'some-other-service=abc');

  const done = await checkNow(app, key, 'example.org');
  t.is(done.body.status, 'completed');
  t.is(done.body.results.status, 'pending');
  const s = statusByRecord(done.body.results.records);
  t.is(s['TXT _mailstead.example.org'], 'mismatch');
  t.is(s['MX example.org 10'], 'verified');
  t.is(s['MX example.org 20'], 'verified');
  t.is(s['TXT example.org'], 'verified');
  t.is(await listedStatus(app, key, 'example.org'), 'pending');
});

test('wrong MX targets and a different SPF are mismatches; another kind of TXT beside ours is not', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  await createDomain(app, key, 'example.org');
  zone.mx('example.org', 'mx.elsewhere.test', 10);
  zone.txt('example.org', 'v=spf1 include:_spf.elsewhere.test ~all');
  zone.txt('_dmarc.example.org', 'google-site-verification=xyz');

  const s = statusByRecord((await checkNow(app, key, 'example.org')).body.results.records);
  t.is(s['MX example.org 10'], 'mismatch');
  t.is(s['MX example.org 20'], 'mismatch');
  t.is(s['TXT example.org'], 'mismatch');
  t.is(s['TXT _dmarc.example.org'], 'missing');
});

test('no records at all (NXDOMAIN) or not of the type (NODATA) are missing', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  await createDomain(app, key, 'example.org');

  const none = await checkNow(app, key, 'example.org');
  t.is(none.body.status, 'completed');
  t.is(none.body.results.status, 'pending');
  t.true(none.body.results.records.every((x: { status: string }) => x.status === 'missing'));

  // The apex now exists with a TXT record only: its MX query is answered with no data.
  zone.txt('example.org', 'v=spf1 mx -all');
  const s = statusByRecord((await checkNow(app, key, 'example.org')).body.results.records);
  t.is(s['MX example.org 10'], 'missing');
  t.is(s['TXT example.org'], 'verified');
  t.is(s['TXT _mailstead.example.org'], 'missing');
  t.is(await listedStatus(app, key, 'example.org'), 'pending');
});

test('MX targets in other case and with a trailing dot, and TXT in other spacing or case, are accepted', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { records } = await createDomain(app, key, 'example.org');
  const value = (name: string) => records.find((r) => r.type === 'TXT' && r.name === name)!.value;
  zone.mx('EXAMPLE.org', 'MX1.MailStead.TEST.', 5);
  zone.mx('example.org', 'mx2.MAILSTEAD.test', 50);
  zone.txt('_mailstead.example.org', value('_mailstead.example.org').toUpperCase());
  zone.txt('example.org', '  v=spf1   MX -all ');
  const p = value('mailstead._domainkey.example.org').split('p=')[1];
  zone.txt('mailstead._domainkey.example.org', `v=DKIM1;k=rsa;  p=${p.slice(0, 100)} ${p.slice(100)};`);
  zone.txt('_dmarc.example.org', 'v=DMARC1;p=none');

  const done = await checkNow(app, key, 'example.org');
  t.is(done.body.results.status, 'verified');
  // The mail client records (SRV, CNAME) were not published: missing, and the domain verified all the same.
  t.deepEqual(done.body.results.records.map((x: { status: string }) => x.status), [...Array(6).fill('verified'), ...Array(5).fill('missing')]);
});

test('TXT records split into 255-byte character-strings are joined before comparing', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  // A long name makes the DKIM answer larger than 512 bytes, so the resolver also goes over TCP.
  const host = `${'a'.repeat(50)}.${'b'.repeat(50)}.example.org`;
  const { records } = await createDomain(app, key, host);
  const dkim = records.find((r) => r.name === `mailstead._domainkey.${host}`)!;
  t.true(Buffer.byteLength(dkim.value) > 255);
  zone.publish(records.filter((r) => r !== dkim));
  const chunks = [dkim.value.slice(0, 255), dkim.value.slice(255)];
  zone.txt(dkim.name, chunks);
  zone.remove(host, 'TXT');
  zone.txt(host, ['v=spf1 ', 'mx', ' -all']);

  const s = statusByRecord((await checkNow(app, key, host)).body.results.records);
  t.is(s[`TXT mailstead._domainkey.${host}`], 'verified');
  t.is(s[`TXT ${host}`], 'verified');
  t.is(await listedStatus(app, key, host), 'verified');
});

test('three failed checks in a row turn a verified domain unverified; fixing the records turns it back', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { records } = await createDomain(app, key, 'example.org');
  zone.publish(records);
  t.is((await checkNow(app, key, 'example.org')).body.results.status, 'verified');

  zone.clear();
  for (const n of [1, 2]) {
    const done = await checkNow(app, key, 'example.org');
    t.is(done.body.results.status, 'verified', `still verified after ${n} failed check(s)`);
    t.true(done.body.results.records.every((x: { status: string }) => x.status === 'missing'));
  }
  // A passing check in between resets the count.
  zone.publish(records);
  t.is((await checkNow(app, key, 'example.org')).body.results.status, 'verified');
  zone.clear();
  for (let n = 0; n < 2; n++) t.is((await checkNow(app, key, 'example.org')).body.results.status, 'verified');
  t.is((await checkNow(app, key, 'example.org')).body.results.status, 'unverified');
  t.is(await listedStatus(app, key, 'example.org'), 'unverified');

  zone.publish(records);
  const fixed = await checkNow(app, key, 'example.org');
  t.is(fixed.body.results.status, 'verified');
  t.is(await listedStatus(app, key, 'example.org'), 'verified');
});

test('a pending domain never becomes unverified however often it fails', async (t) => {
  const { app, key } = await dnsApp(t);
  await createDomain(app, key, 'example.org');
  for (let n = 0; n < 4; n++) t.is((await checkNow(app, key, 'example.org')).body.results.status, 'pending');
});
