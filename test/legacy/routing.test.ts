import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { whoIs } from '../helpers/mailboxes.js';
import { legacyGet, legacyPost } from '../helpers/legacy.js';

const SERVED = [
  ['post', '/api/legacy/v1/create/domain'], ['post', '/api/legacy/v1/create/sub-domain'], ['get', '/api/legacy/v1/list/domain'],
  ['post', '/api/legacy/v1/create/mailbox/single'], ['get', '/api/legacy/v1/get/mailbox/single'], ['post', '/api/legacy/v1/create/mailbox/bulk'],
  ['get', '/api/legacy/v1/get/mailbox/bulk'], ['get', '/api/legacy/v1/list/mailbox'], ['get', '/api/legacy/v1/list/alias'],
];

test('only the nine operations live under /api/legacy: every other path is 404 with the error contract', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const me = (await whoIs(app, key)).tenantId;
  for (const path of ['/get/domain', '/get/sub-domain', '/create/alias', '/get/alias', '/delete/domain/bulk', '/delete/mailbox/bulk', '/mail/inbound', '/webhooks']) {
    const post = await legacyPost(app, path, key, {});
    t.is(post.status, 404, `POST ${path}`);
    t.deepEqual(post.body, { status: 'error', reason: 'Route not found' });
    t.is((await legacyGet(app, path, { key, caller_id: me })).status, 404, `GET ${path}`);
  }
  for (const path of ['/legacy', '/legacy/', '/legacy/v2/list/domain', '/legacy/list/domain', '/legacy/v1/emails']) {
    t.is((await app.request('GET', `${path}?key=${key}&caller_id=${me}`)).status, 404, path);
  }
  const served = await legacyGet(app, '/list/domain', { key, caller_id: me });
  t.is(served.status, 200, 'while a listed path answers');
  const wrongMethod = await legacyGet(app, '/create/domain', { key });
  t.is(wrongMethod.status, 405, 'a listed path with another method is 405, as everywhere');
  t.deepEqual(wrongMethod.body, { status: 'error', reason: 'Method not allowed' });
});

test('a variant B body is read before the key is known, so it is small: over 64 KiB is 413 without a key check', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const big = await legacyPost(app, '/create/domain', key, { Domain: 'big.example', padding: 'x'.repeat(70_000) });
  t.is(big.status, 413);
  t.is(big.body.status, 'error');
  t.is((await legacyPost(app, '/create/domain', key, { Domain: 'small.example', padding: 'x'.repeat(10_000) })).status, 200);
});

test('a revoked or malformed key is 401 on every variant B operation, and no operation reads a header key', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const me = (await whoIs(app, key)).tenantId;
  const revoked = await app.keyFor();
  await app.app.tenants.revokeKey(revoked);
  const headers = { authorization: `Bearer ${key}`, 'x-api-key': key };
  for (const [method, path] of SERVED) {
    const sub = path.replace('/api/legacy/v1', '');
    for (const k of [undefined, revoked, 'short', key.toLowerCase() === key ? key.toUpperCase() : key.toLowerCase()]) {
      const r = method === 'get'
        ? await legacyGet(app, sub, { key: k, caller_id: me, domain: 'x.example', task_id: 1 }, headers)
        : await legacyPost(app, sub, k, {}, headers);
      t.is(r.status, 401, `${method} ${path} with ${k === undefined ? 'a header key only' : 'a bad key'}`);
      t.deepEqual(r.body, { status: 'error', reason: 'API key invalid or missing' });
    }
  }
});

test('the OpenAPI description has the variant B operations, tagged legacy and deprecated, with the validating schemas', async (t) => {
  const app = await startTestApp(t);
  const doc = (await app.get('/openapi.json')).body;
  t.deepEqual(doc.tags.map((tag: { name: string }) => tag.name), ['legacy']);
  const legacyPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/legacy/'));
  t.is(legacyPaths.length, 9, 'nine paths, one operation each');
  let operations = 0;
  for (const [method, path] of SERVED) {
    const op = doc.paths[path]?.[method];
    t.truthy(op, `${method} ${path}`);
    operations++;
    t.deepEqual(op.tags, ['legacy']);
    t.true(op.deprecated);
    t.deepEqual(op.security, [], 'no header scheme: the key is a documented field');
    const spec = app.app.registry.specs().find((s) => '/api' + s.path === path && s.method === method)!;
    if (method === 'post') {
      t.is(op['x-key-in'], 'body');
      t.deepEqual(op.requestBody.content['application/json'].schema, JSON.parse(JSON.stringify(spec.body)));
      t.true(op.requestBody.content['application/json'].schema.required.includes('key'));
    } else {
      t.is(op['x-key-in'], 'query');
      t.true(op.parameters.some((p: { name: string; in: string; required: boolean }) => p.name === 'key' && p.in === 'query' && p.required));
    }
    if (path.endsWith('/list/domain') || path.endsWith('/list/mailbox') || path.endsWith('/list/alias')) {
      t.true(op.parameters.some((p: { name: string; required: boolean }) => p.name === 'caller_id' && p.required));
    }
  }
  t.is(operations, 9);
  for (const kind of ['single', 'bulk']) {
    const responses = doc.paths[`/api/legacy/v1/create/mailbox/${kind}`].post.responses;
    t.truthy(responses['401']);
    t.truthy(responses['404']);
    t.falsy(responses['403'], 'mailbox creation answers 401, never 403');
  }
  t.truthy(doc.paths['/api/legacy/v1/create/sub-domain'].post.responses['429']);
  t.falsy(doc.paths['/api/v1/create/domain'].post.deprecated, 'variant A is not deprecated');
  t.falsy(doc.paths['/api/v1/create/domain'].post.tags);
});
