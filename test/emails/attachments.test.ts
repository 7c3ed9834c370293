import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { sql } from 'kysely';
import { simpleParser } from 'mailparser';
import { manualClock } from '../../src/clock.js';
import { contentDisposition } from '../../src/emails/links.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { deliver, makeInbox, waitForMessage } from '../helpers/emails.js';
import { onPostgres } from '../helpers/pg.js';

const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) % 256))]);
const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/** The path below /api of a link URL. */
const pathOf = (url: string) => new URL(url).pathname.replace(/^\/api/, '');

async function download(app: TestClient, url: string) {
  const res = await fetch(app.base + pathOf(url));
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function mailWithAttachments(app: TestClient, key: string, to: string, extra: Record<string, unknown> = {}) {
  const id = await deliver(app, key, to, {
    attachments: [
      { filename: 'Q1 report.pdf', content_type: 'application/pdf', content: pdf.toString('base64') },
      { filename: 'Grüße 😀 "quoted".png', content_type: 'image/png', content: png.toString('base64').replace(/(.{8})/g, '$1\r\n'), content_id: '<logo@x>', disposition: 'inline' },
    ],
    ...extra,
  });
  return waitForMessage(app, key, id);
}

test('attachment metadata, a signed link, and a download identical to what was sent', async (t) => {
  const clock = manualClock(Date.UTC(2024, 0, 1, 9, 0, 0));
  const app = await startTestApp(t, { clock, env: { MAILSTEAD_PUBLIC_URL: 'https://mail.example.org' } });
  const box = await makeInbox(app);
  const email = await mailWithAttachments(app, box.key, box.address);
  t.true(email.has_attachments);
  t.deepEqual(email.attachments.map((a: any) => ({ ...a, id: typeof a.id })), [
    { id: 'number', filename: 'Q1 report.pdf', content_type: 'application/pdf', size: pdf.length, content_id: null, disposition: 'attachment' },
    { id: 'number', filename: 'Grüße 😀 "quoted".png', content_type: 'image/png', size: png.length, content_id: '<logo@x>', disposition: 'inline' },
  ]);
  const [a1, a2] = email.attachments;
  const link = await app.get(`/v1/emails/${email.id}/attachments/${a1.id}`, box.key);
  t.is(link.status, 200);
  t.is(link.body.status, 'success');
  t.deepEqual(Object.keys(link.body.data).sort(), ['expires_at', 'url']);
  t.regex(link.body.data.url, /^https:\/\/mail\.example\.org\/api\/v1\/attachments\/download\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  t.is(link.body.data.expires_at, '2024-01-01T09:15:00.000Z');
  const got = await download(app, link.body.data.url);
  t.is(got.status, 200);
  t.true(got.bytes.equals(pdf));
  t.is(got.headers.get('content-type'), 'application/pdf');
  t.is(got.headers.get('content-disposition'), 'attachment; filename="Q1 report.pdf"');
  t.is(got.headers.get('x-content-type-options'), 'nosniff');
  t.is(got.headers.get('content-length'), String(pdf.length));
  const second = await download(app, (await app.get(`/v1/emails/${email.id}/attachments/${a2.id}`, box.key)).body.data.url);
  t.true(second.bytes.equals(png));
  t.is(second.headers.get('content-disposition'), `attachment; filename="Grue _quoted_.png"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%F0%9F%98%80%20%22quoted%22.png`);
  t.is(second.headers.get('content-type'), 'image/png');
});

test('Content-Disposition is RFC 6266 safe for any file name', (t) => {
  t.is(contentDisposition('plain.txt'), 'attachment; filename="plain.txt"');
  t.is(contentDisposition('résumé.pdf'), `attachment; filename="resume.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`);
  t.is(contentDisposition('a"b;c%d.txt'), `attachment; filename="a_b_c_d.txt"; filename*=UTF-8''a%22b%3Bc%25d.txt`);
  t.is(contentDisposition('../../etc/passwd\r\nX-Evil: 1'), 'attachment; filename=".._.._etc_passwd__X-Evil: 1"');
  t.is(contentDisposition('日本語'), `attachment; filename="attachment"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E`);
});

test('links expire after 15 minutes and altered tokens are refused with 403', async (t) => {
  const clock = manualClock(Date.UTC(2024, 0, 1, 9, 0, 0));
  const app = await startTestApp(t, { clock });
  const box = await makeInbox(app);
  const email = await mailWithAttachments(app, box.key, box.address);
  const url = (await app.get(`/v1/emails/${email.id}/attachments/${email.attachments[0].id}`, box.key)).body.data.url as string;
  const token = url.slice(url.lastIndexOf('/') + 1);
  const [payload, mac] = token.split('.');
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const otherPayload = Buffer.from(Buffer.from(payload, 'base64url').toString().replace(/\.(\d+)\.(\d+)$/, (_m, a, e) => `.${Number(a) + 1}.${e}`)).toString('base64url');
  const later = Buffer.from(Buffer.from(payload, 'base64url').toString().replace(/\.(\d+)$/, (_m, e) => `.${Number(e) + 3_600_000}`)).toString('base64url');
  for (const bad of [`${flip(payload, 2)}.${mac}`, `${payload}.${flip(mac, 5)}`, `${otherPayload}.${mac}`, `${later}.${mac}`, payload, `${payload}.`, 'garbage', '.x.', `${payload}.${mac}x`]) {
    const r = await fetch(`${app.base}/v1/attachments/download/${encodeURIComponent(bad)}`);
    t.is(r.status, 403, bad);
    t.deepEqual(await r.json(), { status: 'error', reason: 'Invalid download link' });
  }
  clock.advance(15 * 60 * 1000);
  t.is((await download(app, url)).status, 200, 'valid up to its expiry');
  clock.advance(1);
  const expired = await fetch(app.base + pathOf(url));
  t.is(expired.status, 403);
  t.deepEqual(await expired.json(), { status: 'error', reason: 'Download link expired' });
  // A fresh link works again.
  const fresh = (await app.get(`/v1/emails/${email.id}/attachments/${email.attachments[0].id}`, box.key)).body.data.url;
  t.is((await download(app, fresh)).status, 200);
});

test('an attachment of another email or another tenant is 404, and so is the link of a deleted email', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const other = await makeInbox(app);
  const e1 = await mailWithAttachments(app, box.key, box.address);
  const e2 = await mailWithAttachments(app, box.key, box.address);
  const theirs = await mailWithAttachments(app, other.key, other.address);
  t.is((await app.get(`/v1/emails/${e2.id}/attachments/${e1.attachments[0].id}`, box.key)).status, 404);
  t.is((await app.get(`/v1/emails/${theirs.id}/attachments/${theirs.attachments[0].id}`, box.key)).status, 404);
  t.is((await app.get(`/v1/emails/${e1.id}/attachments/999999`, box.key)).status, 404);
  t.is((await app.get(`/v1/emails/${e1.id}/attachments/x`, box.key)).status, 422);
  t.is((await app.get(`/v1/emails/${e1.id}/attachments/${e1.attachments[0].id}`, undefined)).status, 401);
  const url = (await app.get(`/v1/emails/${e1.id}/attachments/${e1.attachments[0].id}`, box.key)).body.data.url;
  t.is((await app.del(`/v1/emails/${e1.id}`, box.key)).status, 200);
  t.is((await download(app, url)).status, 404);
  t.is((await app.get(`/v1/emails/${e1.id}/attachments/${e1.attachments[0].id}`, box.key)).status, 404);
  // Identical attachments of three messages are one blob each (rows of `blobs` on PostgreSQL, where nodes share only the database).
  const blobs = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? blobs(join(dir, d.name)) : [d.name]));
  const stored = onPostgres
    ? Number((await sql<{ n: number }>`SELECT count(*) AS n FROM blobs`.execute(app.app.db)).rows[0].n)
    : blobs(join(app.dataDir, 'blobs')).length;
  t.is(stored, 2);
});

test('raw: API mail is rendered as RFC 5322 that parses back to the stored fields', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const email = await mailWithAttachments(app, box.key, box.address, {
    subject: 'Grüße aus Köln', body_text: 'Hallo Welt', body_html: '<p>Hallo <b>Welt</b></p>', cc: ['cc@x.example'],
    headers: { 'X-Trace': 'abc', Subject: 'ignored duplicate' },
  });
  const res = await fetch(`${app.base}/v1/emails/${email.id}/raw`, { headers: { authorization: `Bearer ${box.key}` } });
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'message/rfc822');
  const raw = Buffer.from(await res.arrayBuffer());
  const parsed = await simpleParser(raw);
  t.is(parsed.subject, 'Grüße aus Köln');
  t.is(parsed.messageId, email.message_id);
  t.is(parsed.text?.trim(), 'Hallo Welt');
  t.is(parsed.html && parsed.html.includes('<b>Welt</b>'), true);
  t.is((parsed.from as any).value[0].address, 'ann@sender.example');
  t.is((parsed.from as any).value[0].name, 'Ann Sender');
  t.is(parsed.headers.get('x-trace'), 'abc');
  t.is(parsed.date?.toISOString(), email.received_at);
  t.is(parsed.attachments.length, 2);
  const byName = new Map(parsed.attachments.map((a) => [a.filename, a]));
  t.true(byName.get('Q1 report.pdf')?.content.equals(pdf));
  t.true(byName.get('Grüße 😀 "quoted".png')?.content.equals(png));
  t.is(byName.get('Grüße 😀 "quoted".png')?.cid, 'logo@x');
  t.is((await app.get(`/v1/emails/${email.id}/raw`, undefined)).status, 401);
  t.is((await app.get('/v1/emails/999999/raw', box.key)).status, 404);
});
