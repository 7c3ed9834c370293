import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { deliver, makeInbox, postInbound, inboundBody, waitForMessage } from '../helpers/emails.js';

test('another tenant sees none of the mail, and gets 404 (never 403) for every email route', async (t) => {
  const app = await startTestApp(t);
  const a = await makeInbox(app);
  const b = await makeInbox(app);
  const mine = await waitForMessage(app, a.key, await deliver(app, a.key, a.address, {
    subject: 'secret plans', attachments: [{ filename: 'x.txt', content_type: 'text/plain', content: 'aGk=' }],
  }));
  await waitForMessage(app, b.key, await deliver(app, b.key, b.address, { subject: 'their mail' }));
  const att = mine.attachments[0].id;
  // b's key, a's ids.
  for (const [method, path] of [
    ['GET', `/v1/emails/${mine.id}`], ['POST', `/v1/emails/${mine.id}/read`], ['DELETE', `/v1/emails/${mine.id}`],
    ['GET', `/v1/emails/${mine.id}/raw`], ['GET', `/v1/emails/${mine.id}/attachments/${att}`],
  ] as const) {
    const r = await app.request(method, path, { key: b.key });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.status, 'error');
  }
  const listB = await app.get('/v1/emails?per_page=100', b.key);
  t.deepEqual(listB.body.data.map((e: any) => e.subject), ['their mail']);
  t.deepEqual((await app.get(`/v1/emails?mailbox_id=${a.mailboxId}`, b.key)).body.data, []);
  t.deepEqual((await app.get('/v1/emails?q=secret', b.key)).body.data, []);
  const syncB = await app.get('/v1/emails/sync?since=2000-01-01T00:00:00Z&per_page=100', b.key);
  t.deepEqual(syncB.body.data.map((e: any) => e.subject), ['their mail']);
  t.deepEqual((await app.get(`/v1/emails/sync?since=2000-01-01T00:00:00Z&mailbox_id=${a.mailboxId}`, b.key)).body.data, []);
  // b cannot post into a's mailbox either.
  t.is((await postInbound(app, b.key, inboundBody(a.address))).status, 422);
  // a's email is untouched by b's attempts.
  const still = await app.get(`/v1/emails/${mine.id}`, a.key);
  t.is(still.status, 200);
  t.false(still.body.data.is_read);
  // A link issued to a cannot be turned into b's by editing the tenant in the token: the signature breaks.
  const url = (await app.get(`/v1/emails/${mine.id}/attachments/${att}`, a.key)).body.data.url as string;
  const token = url.slice(url.lastIndexOf('/') + 1);
  const [payload, mac] = token.split('.');
  const forged = Buffer.from(Buffer.from(payload, 'base64url').toString().replace(/^\d+/, '999')).toString('base64url');
  t.is((await fetch(`${app.base}/v1/attachments/download/${forged}.${mac}`)).status, 403);
});

test('email routes need read or write as SPEC.md says', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const email = await waitForMessage(app, box.key, await deliver(app, box.key, box.address));
  const writeOnly = await app.keyFor({ tenant: box.tenant, perms: ['write'] });
  const inboundOnly = await app.keyFor({ tenant: box.tenant, perms: ['inbound'] });
  for (const path of ['/v1/emails', `/v1/emails/${email.id}`, `/v1/emails/${email.id}/raw`, '/v1/emails/sync?since=2024-01-01T00:00:00Z']) {
    t.is((await app.get(path, writeOnly)).status, 403, path);
    t.is((await app.get(path, inboundOnly)).status, 403, path);
    t.is((await app.get(path, undefined)).status, 401, path);
  }
  t.is((await app.post(`/v1/emails/${email.id}/read`, inboundOnly)).status, 403);
  t.is((await app.post(`/v1/emails/${email.id}/read`, writeOnly)).status, 200);
  t.is((await app.del(`/v1/emails/${email.id}`, writeOnly)).status, 200);
});
