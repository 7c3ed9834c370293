import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { createWebhook } from '../helpers/webhooks.js';

const PRIVATE_OK = { MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' };

test('create answers {data:{id, secret}}; list shows the webhook without its secret', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor({ perms: ['webhook'] });
  const created = await app.post('/v1/webhooks', key, { url: 'https://93.184.215.14/hooks/mail?x=1', events: ['email.received', 'email.deleted'] });
  t.is(created.status, 200);
  t.deepEqual(Object.keys(created.body).sort(), ['data', 'status']);
  t.deepEqual(Object.keys(created.body.data).sort(), ['id', 'secret']);
  t.true(Number.isInteger(created.body.data.id));
  t.regex(created.body.data.secret, /^[0-9a-f]{64}$/);
  const second = await createWebhook(app, key, { url: 'https://93.184.215.14/other', events: ['email.read'], is_active: false });
  t.not(second.secret, created.body.data.secret);

  const list = await app.get('/v1/webhooks', key);
  t.is(list.status, 200);
  t.deepEqual(list.body, {
    status: 'success',
    data: [
      { id: created.body.data.id, url: 'https://93.184.215.14/hooks/mail?x=1', events: ['email.received', 'email.deleted'], is_active: true },
      { id: second.id, url: 'https://93.184.215.14/other', events: ['email.read'], is_active: false },
    ],
  });
  t.false(JSON.stringify(list.body).includes(second.secret));
});

test('PATCH changes fields and needs at least one; DELETE removes; both answer {status:"success"}', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const key = await app.keyFor();
  const hook = await createWebhook(app, key, { url: 'http://127.0.0.1:9/a', events: ['email.received'] });

  for (const body of [{}, { unknown: 1 }]) {
    const r = await app.patch(`/v1/webhooks/${hook.id}`, key, body);
    t.is(r.status, 422);
    t.deepEqual(r.body, { status: 'error', reason: 'Request body needs at least one of url, events, is_active' });
  }
  t.is((await app.patch(`/v1/webhooks/${hook.id}`, key, { events: [] })).status, 422);
  t.is((await app.patch(`/v1/webhooks/${hook.id}`, key, { is_active: 'no' })).status, 422);
  t.is((await app.patch(`/v1/webhooks/${hook.id}`, key, { url: 'ftp://x.example/' })).status, 422);

  const ok = await app.patch(`/v1/webhooks/${hook.id}`, key, { url: 'http://127.0.0.1:9/b', events: ['email.read', 'email.deleted'], is_active: false });
  t.is(ok.status, 200);
  t.deepEqual(ok.body, { status: 'success' });
  t.deepEqual((await app.get('/v1/webhooks', key)).body.data, [{ id: hook.id, url: 'http://127.0.0.1:9/b', events: ['email.read', 'email.deleted'], is_active: false }]);
  t.deepEqual((await app.patch(`/v1/webhooks/${hook.id}`, key, { is_active: true })).body, { status: 'success' });
  t.true((await app.get('/v1/webhooks', key)).body.data[0].is_active);

  const del = await app.del(`/v1/webhooks/${hook.id}`, key);
  t.is(del.status, 200);
  t.deepEqual(del.body, { status: 'success' });
  t.deepEqual((await app.get('/v1/webhooks', key)).body, { status: 'success', data: [] });
  t.is((await app.del(`/v1/webhooks/${hook.id}`, key)).status, 404);
  t.is((await app.patch(`/v1/webhooks/${hook.id}`, key, { is_active: true })).status, 404);
});

test('registration refuses bad URLs, http, non-public addresses and bad event lists with 422', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor({ perms: ['webhook'] });
  const good = ['email.received'];
  const cases: Array<[unknown, RegExp]> = [
    [{ events: good }, /^url is required$/],
    [{ url: 'not a url', events: good }, /^url must be a valid absolute URL$/],
    [{ url: '', events: good }, /^url must not be empty$/],
    [{ url: 42, events: good }, /^url must be string$/],
    [{ url: 'http://93.184.215.14/hook', events: good }, /^url must use https \(MAILSTEAD_WEBHOOK_ALLOW_PRIVATE=true allows http and private addresses, for development\)$/],
    [{ url: 'ftp://93.184.215.14/hook', events: good }, /^url must use https \(MAILSTEAD_WEBHOOK_ALLOW_PRIVATE/],
    [{ url: 'https://user:pw@93.184.215.14/hook', events: good }, /credentials/],
    [{ url: 'https://127.0.0.1/hook', events: good }, /non-public address \(127\.0\.0\.1 is a loopback address; MAILSTEAD_WEBHOOK_ALLOW_PRIVATE=true allows/],
    [{ url: 'https://2130706433/hook', events: good }, /loopback/],
    [{ url: 'https://[::1]/hook', events: good }, /loopback/],
    [{ url: 'https://10.1.2.3/hook', events: good }, /private/],
    [{ url: 'https://172.16.0.1/hook', events: good }, /private/],
    [{ url: 'https://192.168.1.1/hook', events: good }, /private/],
    [{ url: 'https://[fd00::1]/hook', events: good }, /uniqueLocal/],
    [{ url: 'https://169.254.169.254/latest/meta-data', events: good }, /linkLocal/],
    [{ url: 'https://[fe80::1]/hook', events: good }, /linkLocal/],
    [{ url: 'https://100.64.0.1/hook', events: good }, /carrierGradeNat/],
    [{ url: 'https://224.0.0.1/hook', events: good }, /multicast/],
    [{ url: 'https://0.0.0.0/hook', events: good }, /unspecified/],
    [{ url: 'https://[::ffff:127.0.0.1]/hook', events: good }, /loopback/],
    [{ url: 'https://localhost/hook', events: good }, /local name/],
    [{ url: 'https://93.184.215.14/hook' }, /^events is required$/],
    [{ url: 'https://93.184.215.14/hook', events: [] }, /^events must not be empty$/],
    [{ url: 'https://93.184.215.14/hook', events: ['email.sent'] }, /^events\[0\] must be one of "email.received", "email.read", "email.deleted"$/],
    [{ url: 'https://93.184.215.14/hook', events: ['email.read', 'email.read'] }, /^events must not contain duplicates$/],
    [{ url: 'https://93.184.215.14/hook', events: 'email.read' }, /^events must be array$/],
    [{ url: 'https://93.184.215.14/hook', events: good, is_active: 1 }, /^is_active must be boolean$/],
  ];
  for (const [body, reason] of cases) {
    const r = await app.post('/v1/webhooks', key, body);
    t.is(r.status, 422, JSON.stringify(body));
    t.is(r.body.status, 'error');
    t.regex(r.body.reason, reason, JSON.stringify(body));
  }
  t.deepEqual((await app.get('/v1/webhooks', key)).body, { status: 'success', data: [] });
});

test('webhooks are tenant-scoped (404 across tenants) and need the webhook permission', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_OK });
  const owner = await app.keyFor();
  const stranger = await app.keyFor();
  const hook = await createWebhook(app, owner, { url: 'http://127.0.0.1:9/a', events: ['email.read'] });

  t.deepEqual((await app.get('/v1/webhooks', stranger)).body, { status: 'success', data: [] });
  t.is((await app.patch(`/v1/webhooks/${hook.id}`, stranger, { is_active: false })).status, 404);
  t.is((await app.del(`/v1/webhooks/${hook.id}`, stranger)).status, 404);
  t.is((await app.post(`/v1/webhooks/${hook.id}/rotate-secret`, stranger)).status, 404);
  t.is((await app.get(`/v1/webhooks/${hook.id}/deliveries`, stranger)).status, 404);
  t.is((await app.post(`/v1/webhooks/${hook.id}/deliveries/1/replay`, stranger)).status, 404);
  const notFound = await app.patch(`/v1/webhooks/${hook.id}`, stranger, { is_active: false });
  t.deepEqual(notFound.body, { status: 'error', reason: 'Webhook not found' });
  t.true((await app.get('/v1/webhooks', owner)).body.data[0].is_active);

  const reader = await app.keyFor({ perms: ['read', 'write', 'inbound'] });
  t.is((await app.get('/v1/webhooks', reader)).status, 403);
  t.is((await app.post('/v1/webhooks', reader, { url: 'http://127.0.0.1:9/a', events: ['email.read'] })).status, 403);
  t.is((await app.get('/v1/webhooks')).status, 401);
  t.is((await app.post('/v1/webhooks', undefined, { url: 'http://127.0.0.1:9/a', events: ['email.read'] })).status, 401);
  t.is((await app.get('/v1/webhooks/abc/deliveries', owner)).status, 422);
});
