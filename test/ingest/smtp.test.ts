import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import nodemailer from 'nodemailer';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { listAll, makeInbox, pollUntil } from '../helpers/emails.js';
import { onPostgres } from '../helpers/pg.js';
import { PRIVATE_HOOKS, subscribeAll } from '../helpers/webhooks.js';

function send(app: TestClient, to: string, raw: string | Buffer) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, secure: false, ignoreTLS: true, name: 'client.example' });
  return transport.sendMail({ envelope: { from: 'sender@remote.example', to: [to] }, raw }).finally(() => transport.close());
}

const message = (messageId: string, subject: string, body: string) => [
  'From: Remote Sender <sender@remote.example>', 'To: someone@somewhere.example', `Subject: ${subject}`,
  `Message-ID: ${messageId}`, 'Date: Mon, 01 Jan 2024 10:00:00 +0000', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', body, '',
].join('\r\n');

test('mail over SMTP is stored once per Message-ID and its raw form is the bytes received', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  const box = await makeInbox(app);
  const hook = await subscribeAll(t, app, box.key);
  const raw = message('<smtp-1@remote.example>', 'Over SMTP', 'Hello by SMTP');
  const sent = await send(app, box.address, raw);
  t.regex(sent.response, /^250/);
  const again = await send(app, box.address, raw);
  t.regex(again.response, /^250/, 'a duplicate Message-ID is accepted');
  await send(app, box.address, message('<smtp-2@remote.example>', 'Second', 'Another'));
  await pollUntil(app, box.key, '/v1/emails', (r) => r.body.data.length >= 2, 45_000);
  // Wait until the queue is empty, so the duplicate had its chance to be stored.
  const deadline = Date.now() + 45_000;
  while ((await app.app.db.selectFrom('inbound').select('id').where('status', '=', 'queued').execute()).length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const all = await listAll(app, box.key);
  t.deepEqual(all.map((e) => e.subject).sort(), ['Over SMTP', 'Second']);
  const first = all.find((e) => e.subject === 'Over SMTP');
  t.is(first.to_email, box.address, 'to_email is the envelope recipient');
  t.is(first.from_email, 'sender@remote.example');
  const got = (await app.get(`/v1/emails/${first.id}`, box.key)).body.data;
  t.is(got.message_id, '<smtp-1@remote.example>');
  t.is(got.body_text.trim(), 'Hello by SMTP');
  t.truthy(got.auth.spf, 'SMTP mail carries authentication results');
  const res = await fetch(`${app.base}/v1/emails/${first.id}/raw`, { headers: { authorization: `Bearer ${box.key}` } });
  t.is(res.headers.get('content-type'), 'message/rfc822');
  const bytes = Buffer.from(await res.arrayBuffer()).toString('utf8');
  t.true(bytes.startsWith('Return-Path: <sender@remote.example>\r\nReceived: '), 'our Return-Path: and Received: headers come first');
  t.true(bytes.endsWith(raw), 'then the message exactly as sent');
  const events = await app.app.db.selectFrom('events').select('type').execute();
  t.is(events.length, 2);
  t.deepEqual((await hook.waitForCount(2)).map((r) => r.body.event), ['email.received', 'email.received']);
});

test('a large SMTP message is kept whole (a file under raw/ on SQLite, its queue row on PostgreSQL) and served back whole', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const body = Array.from({ length: 6000 }, (_, i) => `line ${i} ${'lorem ipsum '.repeat(5)}`).join('\r\n');
  const raw = message('<big@remote.example>', 'Big one', body);
  t.true(raw.length > 256 * 1024);
  await send(app, box.address, raw);
  const [item] = (await pollUntil(app, box.key, '/v1/emails', (r) => r.body.data.length === 1, 45_000)).body.data;
  if (onPostgres) {
    // Nodes share nothing but the database: the bytes are in it, and no file is left on this node.
    const row = await app.app.db.selectFrom('inbound').select(['raw', 'raw_path']).executeTakeFirstOrThrow();
    t.is(row.raw_path, null);
    t.true(row.raw!.length > 256 * 1024);
    t.is(readdirSync(join(app.dataDir, 'raw')).length, 0);
  } else {
    t.is(readdirSync(join(app.dataDir, 'raw')).length, 1);
  }
  const res = await fetch(`${app.base}/v1/emails/${item.id}/raw`, { headers: { authorization: `Bearer ${box.key}` } });
  const bytes = Buffer.from(await res.arrayBuffer()).toString('utf8');
  t.true(bytes.endsWith(raw));
  t.is(item.size, Buffer.byteLength(bytes));
  t.is((await app.get(`/v1/emails?q=${encodeURIComponent('"line 100"')}`, box.key)).body.data.length, 1);
  // Only the first 256 K characters of a body are indexed.
  t.is((await app.get(`/v1/emails?q=${encodeURIComponent('"line 5999"')}`, box.key)).body.data.length, 0);
});
