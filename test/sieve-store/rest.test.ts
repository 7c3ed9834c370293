import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';

const FILE = 'require ["fileinto"];\nif header :contains "subject" "report" { fileinto "Reports"; }\n';
const path = (address: string, rest = '') => `/v1/mailboxes/${encodeURIComponent(address)}/sieve${rest}`;

test('scripts over REST: put, list, get, activate (one at a time), deactivate, delete', async (t) => {
  const app = await startTestApp(t);
  const { key, address } = await makeInbox(app);
  const put = await app.request('PUT', path(address, '/filters'), { key, body: { script: FILE } });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.deepEqual(put.body.data, { name: 'filters', active: false, size: Buffer.byteLength(FILE) });
  t.is((await app.request('PUT', path(address, '/other'), { key, body: { script: 'keep;', active: true } })).status, 200);

  let list = await app.get(path(address), key);
  t.deepEqual(list.body.data, [{ name: 'filters', active: false, size: Buffer.byteLength(FILE) }, { name: 'other', active: true, size: 5 }]);
  t.is((await app.post(path(address, '/filters/activate'), key)).status, 200);
  list = await app.get(path(address), key);
  t.deepEqual(list.body.data.map((s: any) => [s.name, s.active]), [['filters', true], ['other', false]]);

  const one = await app.get(path(address, '/filters'), key);
  t.is(one.status, 200);
  t.is(one.body.data.script, FILE);
  t.true(one.body.data.active);

  t.is((await app.post(path(address, '/deactivate'), key)).status, 200);
  list = await app.get(path(address), key);
  t.true(list.body.data.every((s: any) => !s.active));

  t.is((await app.del(path(address, '/filters'), key)).status, 200);
  t.is((await app.get(path(address, '/filters'), key)).status, 404);
  t.is((await app.del(path(address, '/filters'), key)).status, 404);
  t.is((await app.post(path(address, '/nothing/activate'), key)).status, 404);
});

test('a script that does not parse is refused with 422 naming its line and column; nothing is stored', async (t) => {
  const app = await startTestApp(t);
  const { key, address } = await makeInbox(app);
  const bad = 'require ["fileinto"];\nif true {\n  fileinto "x"\n}\n';
  const r = await app.request('PUT', path(address, '/bad'), { key, body: { script: bad } });
  t.is(r.status, 422);
  t.is(r.body.status, 'error');
  t.is(r.body.line, 4);
  t.true(Number.isInteger(r.body.column) && r.body.column >= 1);
  t.regex(r.body.reason, /line 4/);
  const unknown = await app.request('PUT', path(address, '/bad'), { key, body: { script: 'require ["include"];\n' } });
  t.is(unknown.status, 422);
  t.is(unknown.body.line, 1);
  t.deepEqual((await app.get(path(address), key)).body.data, []);
});

test('limits: 10 scripts per mailbox, 64 KB per script', async (t) => {
  const app = await startTestApp(t);
  const { key, address } = await makeInbox(app);
  for (let i = 0; i < 10; i++) t.is((await app.request('PUT', path(address, `/s${i}`), { key, body: { script: 'keep;' } })).status, 200);
  const eleventh = await app.request('PUT', path(address, '/s10'), { key, body: { script: 'keep;' } });
  t.is(eleventh.status, 422);
  t.regex(eleventh.body.reason, /10 scripts/);
  t.is((await app.request('PUT', path(address, '/s3'), { key, body: { script: 'discard;' } })).status, 200, 'replacing one is not an eleventh');
  const big = `# ${'x'.repeat(64 * 1024)}\nkeep;\n`;
  const tooBig = await app.request('PUT', path(address, '/s3'), { key, body: { script: big } });
  t.is(tooBig.status, 422);
});

test('tenant scoping and permissions: another tenant gets 404, a read key cannot write', async (t) => {
  const app = await startTestApp(t);
  const mine = await makeInbox(app);
  const other = await makeInbox(app);
  t.is((await app.request('PUT', path(mine.address, '/a'), { key: mine.key, body: { script: 'keep;' } })).status, 200);
  t.is((await app.get(path(mine.address), other.key)).status, 404);
  t.is((await app.get(path(mine.address, '/a'), other.key)).status, 404);
  t.is((await app.request('PUT', path(mine.address, '/a'), { key: other.key, body: { script: 'keep;' } })).status, 404);
  const reader = await app.keyFor({ tenant: mine.tenant, perms: ['read'] });
  t.is((await app.get(path(mine.address), reader)).status, 200);
  t.is((await app.request('PUT', path(mine.address, '/b'), { key: reader, body: { script: 'keep;' } })).status, 403);
  t.is((await app.get(path(mine.address))).status, 401);
  t.is((await app.request('PUT', path(mine.address, '/c'), { key: mine.key, body: { script: 'keep;', extra: 1 } })).status, 422);
});

test('vacation settings: defaults, validation, round trip', async (t) => {
  const app = await startTestApp(t);
  const { key, address } = await makeInbox(app);
  const url = `/v1/mailboxes/${encodeURIComponent(address)}/vacation`;
  const empty = await app.get(url, key);
  t.is(empty.status, 200);
  t.false(empty.body.data.enabled);
  const put = await app.request('PUT', url, { key, body: { enabled: true, body: 'Away until Monday', start: '2026-11-01', end: '2026-12-01' } });
  t.is(put.status, 200, JSON.stringify(put.body));
  const got = await app.get(url, key);
  t.deepEqual(got.body.data, { enabled: true, subject: null, body: 'Away until Monday', days: 7, start: '2026-11-01', end: '2026-12-01' });
  t.is((await app.request('PUT', url, { key, body: { enabled: true, body: 'x', days: 31 } })).status, 422);
  t.is((await app.request('PUT', url, { key, body: { enabled: true, body: 'x', days: 0 } })).status, 422);
  t.is((await app.request('PUT', url, { key, body: { enabled: true } })).status, 422);
  t.is((await app.request('PUT', url, { key, body: { enabled: true, body: 'x', start: 'tomorrow' } })).status, 422);
  t.is((await app.request('PUT', url, { key, body: { enabled: true, body: 'x', start: '2026-12-02', end: '2026-12-01' } })).status, 422);
  t.is((await app.request('PUT', `/v1/mailboxes/nobody%40example.com/vacation`, { key, body: { enabled: false, body: '' } })).status, 404);
});
