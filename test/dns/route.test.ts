import test from 'ava';
import { createDomain, dnsApp } from './setup.js';

test('POST /v1/domains/{domain}/check: auth, permission, validation, tenant scope', async (t) => {
  const { app, key } = await dnsApp(t);
  await createDomain(app, key, 'example.org');

  t.is((await app.post('/v1/domains/example.org/check', undefined)).status, 401);
  const readOnly = await app.keyFor({ perms: ['read'] });
  const denied = await app.post('/v1/domains/example.org/check', readOnly);
  t.is(denied.status, 403);
  t.is(denied.body.status, 'error');

  const bad = await app.post('/v1/domains/not_a_host/check', key);
  t.is(bad.status, 422);
  t.regex(bad.body.reason, /^domain must not contain underscores/);
  t.is((await app.post('/v1/domains/localhost/check', key)).status, 422);

  const unknown = await app.post('/v1/domains/unknown.example/check', key);
  t.is(unknown.status, 404);
  t.deepEqual(unknown.body, { status: 'error', reason: 'Domain not found' });

  // Another tenant's domain does not exist for this key: 404, never 403.
  const other = await app.keyFor();
  t.is((await app.post('/v1/domains/example.org/check', other)).status, 404);

  // Any write key of the owning tenant may check; the hostname is normalised.
  const r = await app.post('/v1/domains/EXAMPLE.org/check', key);
  t.is(r.status, 200);
  t.is(r.body.domain, 'example.org');

  // The task is the caller's: another key (even one of a tenant without the domain) gets 404.
  t.is((await app.get(`/v1/get/domain?task_id=${r.body.task_id}`, other)).status, 404);
  const done = await app.pollTask('/v1/get/domain', key, r.body.task_id);
  t.is(done.status, 200);
  t.is(done.body.results.domain, 'example.org');
  // A check task is not a sub-domain task.
  t.is((await app.get(`/v1/get/sub-domain?task_id=${r.body.task_id}`, key)).status, 422);
});

test('the operation is in the OpenAPI description', async (t) => {
  const { app } = await dnsApp(t);
  const r = await app.get('/openapi.json');
  t.is(r.status, 200);
  t.truthy(r.body.paths['/api/v1/domains/{domain}/check']?.post);
});
