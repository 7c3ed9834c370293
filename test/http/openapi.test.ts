import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp } from '../helpers/app.js';

test('the OpenAPI description is valid 3.1, versioned 1.0.0, and lists every implemented path', async (t) => {
  const app = await startTestApp(t);
  const r = await app.get('/openapi.json');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /application\/json/);
  const doc = r.body;
  t.is(doc.openapi, '3.1.0');
  t.is(doc.info.version, '1.0.0');
  const validator = new Validator();
  const result = await validator.validate(doc);
  t.true(result.valid, JSON.stringify(result.errors));
  for (const spec of app.app.registry.specs()) {
    const op = doc.paths['/api' + spec.path]?.[spec.method];
    t.truthy(op, `${spec.method} ${spec.path} is described`);
    if (spec.body) t.deepEqual(op.requestBody.content['application/json'].schema, JSON.parse(JSON.stringify(spec.body)), 'the validating schema is the published one');
  }
  t.truthy(doc.paths['/api/v1/create/domain'].post);
  t.truthy(doc.paths['/api/v1/list/domain'].get);
});
