import test from 'ava';
import { sendMail } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, outboundItems, startWorld, waitForItems } from './world.js';

const SENDER = `ann@${REMOTE_DOMAIN}`;

test('GET /v1/outbound pages newest first with cursors, filters by status, and GET/retry follow section 12', async (t) => {
  // Recipients named "slow*" are refused with 4xx (they stay queued); the rest are taken.
  const { app, key, sink, tenant } = await startWorld(t, {
    answer: (rcpt) => (rcpt.startsWith('slow') ? '451 4.7.1 later' : null),
    aliases: { [`fwd@${ALIAS_DOMAIN}`]: [`slow1@${REMOTE_DOMAIN}`, `slow2@${REMOTE_DOMAIN}`, `ok1@${REMOTE_DOMAIN}`, `ok2@${REMOTE_DOMAIN}`, `ok3@${REMOTE_DOMAIN}`] },
    env: { MAILSTEAD_OUTBOUND_RETRY_SCHEDULE: '3600' },
  });
  await sendMail(app.smtpPort, { from: SENDER, to: [`fwd@${ALIAS_DOMAIN}`] }, message(SENDER, `fwd@${ALIAS_DOMAIN}`, 'paged'));
  await waitForItems(app, key, (items) => items.length === 5 && items.every((i) => i.attempts === 1), 'five tried items');
  await sink.nth(1);

  // Pages of 2: newest first, next then back with prev.
  const p1 = await app.get('/v1/outbound?per_page=2', key);
  t.is(p1.status, 200);
  t.is(p1.body.status, 'success');
  t.is(p1.body.data.length, 2);
  t.is(p1.body.meta.prev_cursor, null);
  t.is(p1.body.meta.per_page, 2);
  t.true(p1.body.data[0].id > p1.body.data[1].id);
  const p2 = await app.get(`/v1/outbound?per_page=2&cursor=${p1.body.meta.next_cursor}`, key);
  const p3 = await app.get(`/v1/outbound?per_page=2&cursor=${p2.body.meta.next_cursor}`, key);
  t.is(p3.body.data.length, 1);
  t.is(p3.body.meta.next_cursor, null);
  const ids = [...p1.body.data, ...p2.body.data, ...p3.body.data].map((i: any) => i.id);
  t.deepEqual(ids, [...ids].sort((a, b) => b - a));
  t.is(new Set(ids).size, 5);
  const back = await app.get(`/v1/outbound?per_page=2&cursor=${p2.body.meta.prev_cursor}`, key);
  t.deepEqual(back.body.data.map((i: any) => i.id), p1.body.data.map((i: any) => i.id));
  t.is(back.body.meta.prev_cursor, null);

  const queued = await outboundItems(app, key, '&status=queued');
  const sent = await outboundItems(app, key, '&status=sent');
  t.deepEqual(queued.map((i) => i.rcpt_to).sort(), [`slow1@${REMOTE_DOMAIN}`, `slow2@${REMOTE_DOMAIN}`]);
  t.is(sent.length, 3);
  t.deepEqual(Object.keys(sent[0]).sort(), ['attempts', 'created_at', 'email_id', 'id', 'kind', 'last_response', 'mail_from', 'next_attempt_at', 'rcpt_to', 'status', 'updated_at']);
  t.is((await app.get('/v1/outbound?status=bounced', key)).status, 422);
  t.is((await app.get('/v1/outbound?per_page=0', key)).status, 422);
  t.is((await app.get('/v1/outbound?cursor=bm90IGEgY3Vyc29y', key)).status, 422);

  // One item; a retry of a queued item tries it now; a sent one is 422.
  const slow = queued[0];
  t.deepEqual((await app.get(`/v1/outbound/${slow.id}`, key)).body, { status: 'success', data: slow });
  sink.setAnswer(() => null);
  t.deepEqual((await app.post(`/v1/outbound/${slow.id}/retry`, key)).body, { status: 'success' });
  await waitFor(async () => (await app.get(`/v1/outbound/${slow.id}`, key)).body.data.status === 'sent', 'the retried item sent');
  const again = await app.post(`/v1/outbound/${sent[0].id}/retry`, key);
  t.is(again.status, 422);
  t.is(again.body.status, 'error');
  t.is((await app.get('/v1/outbound/999999', key)).status, 404);

  // Permissions and isolation.
  const other = await app.keyFor();
  t.is((await app.get(`/v1/outbound/${slow.id}`, other)).status, 404);
  t.is((await app.post(`/v1/outbound/${slow.id}/retry`, other)).status, 404);
  t.deepEqual((await app.get('/v1/outbound', other)).body.data, []);
  const readOnly = await app.keyFor({ tenant, perms: ['read'] });
  const writeOnly = await app.keyFor({ tenant, perms: ['write'] });
  t.is((await app.get('/v1/outbound', readOnly)).status, 200);
  t.is((await app.post(`/v1/outbound/${slow.id}/retry`, readOnly)).status, 403);
  t.is((await app.get('/v1/outbound', writeOnly)).status, 403);
  t.is((await app.get('/v1/outbound')).status, 401);

  // OpenAPI and metrics.
  const spec = await app.get('/openapi.json');
  t.truthy(spec.body.paths['/api/v1/outbound']?.get);
  t.truthy(spec.body.paths['/api/v1/outbound/{id}/retry']?.post);
  t.deepEqual(spec.body.paths['/api/v1/outbound'].get.parameters.find((p: any) => p.name === 'status')?.schema.enum, ['queued', 'sent', 'failed']);
  const metrics = await (await fetch(`http://127.0.0.1:${app.httpPort}/metrics`)).text();
  t.regex(metrics, /mailstead_outbound_queue\{status="sent"\} 4/);
  t.regex(metrics, /mailstead_outbound_queue\{status="queued"\} 1/);
  t.regex(metrics, /mailstead_outbound_attempts_total\{result="deferred"\} 2/);
});
