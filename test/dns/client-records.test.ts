import test from 'ava';
import { checkNow, createDomain, dnsApp, listedStatus, statusByRecord } from './setup.js';

const CLIENT_RECORDS = ['SRV _imaps._tcp.example.org', 'SRV _submissions._tcp.example.org', 'SRV _submission._tcp.example.org', 'CNAME autoconfig.example.org', 'CNAME autodiscover.example.org'];

test('the SRV and CNAME records of mail clients are checked but do not decide the domain\'s status', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { records } = await createDomain(app, key, 'example.org');
  const isClientRecord = (r: { type: string }) => r.type === 'SRV' || r.type === 'CNAME';

  // Only the client records: all verified, and the domain stays pending (MX and the token are missing).
  zone.publish(records.filter(isClientRecord));
  let done = await checkNow(app, key, 'example.org');
  let s = statusByRecord(done.body.results.records);
  t.deepEqual(CLIENT_RECORDS.map((r) => s[r]), Array(5).fill('verified'));
  t.is(s['TXT _mailstead.example.org'], 'missing');
  t.is(done.body.results.status, 'pending');

  // Wrong port, wrong target, a CNAME elsewhere: mismatches; the ownership records verify the domain all the same.
  zone.clear();
  zone.publish(records.filter((r) => !isClientRecord(r)));
  zone.srv('_imaps._tcp.example.org', 143, 'mx.mailstead.test');
  zone.srv('_submissions._tcp.example.org', 465, 'mail.elsewhere.test');
  zone.srv('_submission._tcp.example.org', 587, 'MX.MailStead.Test.', 10, 5); // case, trailing dot, priority and weight do not matter
  zone.cname('autoconfig.example.org', 'autoconfig.elsewhere.test');
  done = await checkNow(app, key, 'example.org');
  s = statusByRecord(done.body.results.records);
  t.deepEqual(CLIENT_RECORDS.map((r) => s[r]), ['mismatch', 'mismatch', 'verified', 'mismatch', 'missing']);
  t.is(done.body.results.status, 'verified');
  t.is(await listedStatus(app, key, 'example.org'), 'verified');
});

test('GET /v1/domains/{domain} shows the records with their current statuses, to the owner only', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { records } = await createDomain(app, key, 'example.org');

  const fresh = await app.get('/v1/domains/Example.org', key);
  t.is(fresh.status, 200);
  t.deepEqual(Object.keys(fresh.body).sort(), ['data', 'status']);
  t.is(fresh.body.status, 'success');
  t.deepEqual(Object.keys(fresh.body.data).sort(), ['domain', 'records', 'status']);
  t.is(fresh.body.data.domain, 'example.org');
  t.is(fresh.body.data.status, 'pending');
  t.deepEqual(fresh.body.data.records, records);
  t.true(fresh.body.data.records.every((r: { status: string }) => r.status === 'Not checked'));

  zone.publish(records);
  await checkNow(app, key, 'example.org');
  const checked = await app.get('/v1/domains/example.org', await app.keyFor({ perms: ['read'], tenant: await tenantOf(app, key) }));
  t.is(checked.status, 200);
  t.is(checked.body.data.status, 'verified');
  t.true(checked.body.data.records.every((r: { status: string }) => r.status === 'verified'));

  t.is((await app.get('/v1/domains/example.org')).status, 401);
  t.is((await app.get('/v1/domains/example.org', await app.keyFor({ perms: ['write'] }))).status, 403);
  const other = await app.get('/v1/domains/example.org', await app.keyFor());
  t.is(other.status, 404);
  t.deepEqual(other.body, { status: 'error', reason: 'Domain not found' });
  t.is((await app.get('/v1/domains/unknown.example', key)).status, 404);
  t.is((await app.get('/v1/domains/not_a_host', key)).status, 422);
});

test('a domain provisioned before the client records gets them at its next check', async (t) => {
  const { zone, app, key } = await dnsApp(t);
  const { records } = await createDomain(app, key, 'example.org');
  const domain = await app.app.db.selectFrom('domains').select('id').where('hostname', '=', 'example.org').executeTakeFirstOrThrow();
  await app.app.db.deleteFrom('dns_records').where('domain_id', '=', domain.id).where('position', '>=', 6).execute();
  t.is((await app.get('/v1/domains/example.org', key)).body.data.records.length, 6);

  zone.publish(records);
  const first = await checkNow(app, key, 'example.org');
  t.is(first.body.results.status, 'verified');
  t.deepEqual(first.body.results.records.map((r: { status: string }) => r.status), [...Array(6).fill('verified'), ...Array(5).fill('Not checked')]);
  const second = await checkNow(app, key, 'example.org');
  t.deepEqual(second.body.results.records, records.map((r) => ({ ...r, status: 'verified' })));
});

async function tenantOf(app: Awaited<ReturnType<typeof dnsApp>>['app'], key: string): Promise<string> {
  const k = await app.app.tenants.authenticate(key);
  const row = await app.app.db.selectFrom('tenants').select('name').where('id', '=', k!.tenantId).executeTakeFirstOrThrow();
  return row.name;
}
