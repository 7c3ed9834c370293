import { connect } from 'node:net';
import test from 'ava';
import { isStorageFull } from '../../src/http/errors.js';
import { startTestApp } from '../helpers/app.js';

test('unknown routes are 404 and wrong methods 405, both in the error contract', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const missing = await app.get('/v1/nothing/here', key);
  t.is(missing.status, 404);
  t.deepEqual(missing.body, { status: 'error', reason: 'Route not found' });
  const outside = await fetch(`http://127.0.0.1:${app.httpPort}/elsewhere`);
  t.is(outside.status, 404);
  t.is(((await outside.json()) as { status: string }).status, 'error');
  const wrong = await app.request('GET', '/v1/create/domain', { key });
  t.is(wrong.status, 405);
  t.deepEqual(wrong.body, { status: 'error', reason: 'Method not allowed' });
  t.regex(wrong.headers.get('allow') ?? '', /POST/);
});

test('malformed JSON is 422, non-JSON bodies 415, invalid UTF-8 422, oversized bodies 413', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const json = { 'content-type': 'application/json' };
  const malformed = await app.request('POST', '/v1/create/domain', { key, raw: '{"Domain": ', headers: json });
  t.deepEqual([malformed.status, malformed.body], [422, { status: 'error', reason: 'Malformed JSON body' }]);
  const form = await app.request('POST', '/v1/create/domain', { key, raw: 'Domain=x.org', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.is(form.status, 415);
  t.is(form.body.status, 'error');
  const badUtf8 = await app.request('POST', '/v1/create/domain', { key, raw: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), headers: json });
  t.deepEqual([badUtf8.status, badUtf8.body.reason], [422, 'Request body is not valid UTF-8']);
  const huge = await app.request('POST', '/v1/create/domain', { key, raw: JSON.stringify({ Domain: 'a.org', pad: 'x'.repeat(2 * 1024 * 1024) }), headers: json });
  t.is(huge.status, 413);
  t.is(huge.body.status, 'error');
  const notObject = await app.request('POST', '/v1/create/domain', { key, raw: '[1,2]', headers: json });
  t.is(notObject.status, 422);
  t.is((await app.get('/health')).status, 200, 'still serving');
});

test('an unexpected error is a 500 with a generic reason and no stack', async (t) => {
  const app = await startTestApp(t);
  app.app.registry.add({
    method: 'get', path: '/v1/test/boom', summary: 'test only', permission: false,
    handler: () => { throw new Error('secret internals at /srv/db.ts:42'); },
  });
  const r = await app.get('/v1/test/boom');
  t.is(r.status, 500);
  t.deepEqual(r.body, { status: 'error', reason: 'Internal server error' });
});

test('a full disk or database is a 503 with Retry-After: nothing was acknowledged, come back later', async (t) => {
  const app = await startTestApp(t);
  const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  const wrapped = new Error('storage thread failed', { cause: Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }) });
  for (const [path, err] of [['/v1/test/enospc', full], ['/v1/test/sqlite-full', wrapped]] as const) {
    app.app.registry.add({ method: 'get', path, summary: 'test only', permission: false, handler: () => { throw err; } });
    const r = await app.get(path);
    t.is(r.status, 503, path);
    t.is(r.headers.get('retry-after'), '60');
    t.deepEqual(r.body, { status: 'error', reason: 'Storage is full: try again later' });
  }
  t.false(isStorageFull(new Error('something else')));
  t.true(isStorageFull(new Error('SqliteError: database or disk is full')));
});

test('health answers without a key and requests carry an id', async (t) => {
  const app = await startTestApp(t);
  const r = await app.get('/health');
  t.deepEqual([r.status, r.body], [200, { status: 'success' }]);
  t.regex(r.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const echoed = await app.request('GET', '/health', { headers: { 'x-request-id': 'trace-123' } });
  t.is(echoed.headers.get('x-request-id'), 'trace-123');
});

test('GET /metrics serves Prometheus text without a key, counting requests by route', async (t) => {
  const app = await startTestApp(t);
  await app.get('/health');
  const res = await fetch(`http://127.0.0.1:${app.httpPort}/metrics`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await res.text();
  t.regex(text, /mailstead_http_requests_total\{method="GET",route="\/api\/health",status="200"\} 1/);
  t.regex(text, /mailstead_process_cpu_user_seconds_total/);
});

test('a request the HTTP parser refuses (raw UTF-8 in the URL) still gets a body in the error contract', async (t) => {
  const app = await startTestApp(t);
  const raw = (request: Buffer) => new Promise<string>((resolve, reject) => {
    const socket = connect(app.httpPort, '127.0.0.1', () => socket.end(request));
    let text = '';
    socket.on('data', (d) => { text += d.toString('utf8'); });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  const reply = await raw(Buffer.from('GET /api/v1/list/mailbox?domain=bücher.de HTTP/1.1\r\nHost: x\r\n\r\n', 'utf8'));
  const [head, body] = reply.split('\r\n\r\n');
  t.regex(head, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.regex(head, /\r\nContent-Type: application\/json; charset=utf-8/);
  t.is(JSON.parse(body).status, 'error');
  t.regex(JSON.parse(body).reason, /percent-encoded/);
  const huge = await raw(Buffer.from(`GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
  t.regex(huge, /^HTTP\/1\.1 431 /);
  t.is((await app.get('/health')).status, 200, 'still serving');
});
