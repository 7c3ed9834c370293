import test from 'ava';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { inboundBody, makeInbox, postInbound, waitForEmails } from '../helpers/emails.js';
import { listAll, provision, rawSession } from '../helpers/smtp.js';

/** Sends `bytes` (ending with CRLF, no line starting with a dot) as one message over a raw socket, exactly as given. */
async function sendRaw(port: number, from: string, to: string, bytes: Buffer): Promise<string> {
  const s = await rawSession(port, 30_000);
  try {
    await s.command('EHLO hostile.example');
    await s.command(`MAIL FROM:<${from}>`);
    await s.command(`RCPT TO:<${to}>`);
    const go = await s.command('DATA');
    if (!go.startsWith('354')) throw new Error(`DATA: ${go}`);
    // The message ends with CRLF, which is also the first half of the end-of-data line.
    s.write(Buffer.concat([bytes, Buffer.from('.\r\n')]));
    return await s.reply();
  } finally {
    s.close();
  }
}

const bin = (s: string) => Buffer.from(s, 'latin1');

/** NUL bytes and invalid UTF-8 in header values, a header name, a display name and the body. */
const nulMessage = Buffer.concat([
  bin('From: "Nul\x00 Sender" <nul@sender.example>\r\nTo: box@hostile.test\r\nSubject: nul\x00subject \xc3\x28 bad\r\n'),
  bin('Message-ID: <hostile-nul@sender.example>\r\nX-Nul: a\x00b \xfe\xff\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n'),
  bin('body with nul\x00 here and bad \xe2\x82 bytes \xff there\r\nsecond line\r\n'),
]);

/** A 2,000-part MIME tree: nested multiparts of text parts, some attachments named with NUL and invalid UTF-8. */
function manyParts(): Buffer {
  const parts: Buffer[] = [bin('From: many@sender.example\r\nTo: box@hostile.test\r\nSubject: two thousand parts\r\nMessage-ID: <hostile-many@sender.example>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="outer"\r\n\r\npreamble\r\n')];
  for (let g = 0; g < 40; g++) {
    parts.push(bin(`--outer\r\nContent-Type: multipart/mixed; boundary="inner${g}"\r\n\r\n`));
    for (let i = 0; i < 50; i++) {
      const n = g * 50 + i;
      const head = n % 100 === 0
        ? `Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="file\x00${n}\xff.bin"\r\n`
        : 'Content-Type: text/plain; charset=utf-8\r\n';
      parts.push(bin(`--inner${g}\r\n${head}\r\npart ${n} \x00 \xc0\r\n`));
    }
    parts.push(bin(`--inner${g}--\r\n`));
  }
  parts.push(bin('--outer--\r\n'));
  return Buffer.concat(parts);
}

const ordinary = bin('From: plain@sender.example\r\nTo: box@hostile.test\r\nSubject: ordinary after hostile\r\nMessage-ID: <ordinary@sender.example>\r\n\r\nNothing odd here.\r\n');

/** Everything a stored email answers, as text: no NUL may be in any of it. */
const textOf = async (app: TestClient, key: string, id: number) => JSON.stringify((await app.get(`/v1/emails/${id}`, key)).body.data);

test('hostile mail (NUL, invalid UTF-8, 2,000 parts) is stored with U+FFFD text and its bytes as sent, and the ordinary message after it is listed at once', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'hostile.test', ['box']);
  const many = manyParts();
  t.regex(await sendRaw(app.smtpPort, 'nul@sender.example', 'box@hostile.test', nulMessage), /^250 /);
  t.regex(await sendRaw(app.smtpPort, 'many@sender.example', 'box@hostile.test', many), /^250 /);
  t.regex(await sendRaw(app.smtpPort, 'plain@sender.example', 'box@hostile.test', ordinary), /^250 /);

  // The ordinary message is listed within a bounded wait (not behind the hostile ones, whatever their fate).
  const deadline = Date.now() + 30_000;
  let listed: any[] = [];
  while (!listed.some((e) => e.subject === 'ordinary after hostile') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    listed = await listAll(app, key);
  }
  t.true(listed.some((e) => e.subject === 'ordinary after hostile'), 'the ordinary message is listed within the deadline');
  // The hostile ones are stored too (they came first).
  while (listed.length < 3 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    listed = await listAll(app, key);
  }
  t.is(listed.length, 3, 'all three messages are stored');
  t.is((await app.get('/v1/ingest/set-aside', await app.keyFor({ admin: true }))).body.data.length, 0, 'nothing was set aside');
  // Stored on the first try each: no failed try, so no message waited out a retry's delay (5 s and up).
  const tries = await app.app.db.selectFrom('inbound').select(['attempts', 'error']).execute();
  t.is(tries.length, 3);
  t.deepEqual(tries.map((r) => [Number(r.attempts), r.error]), [[0, null], [0, null], [0, null]]);

  const nul = listed.find((e) => e.subject.startsWith('nul'));
  const full = (await app.get(`/v1/emails/${nul.id}`, key)).body.data;
  // A header block that is not UTF-8 is read as Latin-1 (smtp/mime.ts fixHeaderBlock, as old mailers write it); NUL is U+FFFD.
  t.is(full.subject, 'nul\uFFFDsubject \u00c3( bad', 'NUL shows as U+FFFD');
  t.regex(full.from_name, /^Nul[ \uFFFD]+Sender$/);
  t.true(full.body_text.startsWith('body with nul\uFFFD here and bad \uFFFD bytes \uFFFD there'), full.body_text);
  t.is(full.headers['x-nul'], 'a\uFFFDb \u00fe\u00ff');
  t.false((await textOf(app, key, nul.id)).includes('\\u0000'), 'no NUL in anything answered');

  const tree = listed.find((e) => e.subject === 'two thousand parts');
  const treeFull = (await app.get(`/v1/emails/${tree.id}`, key)).body.data;
  t.is(treeFull.attachments.length, 20);
  // A part's 8-bit header bytes are read as Latin-1 (mailparser); the NUL is U+FFFD.
  t.is(treeFull.attachments[0].filename, 'file\uFFFD0\u00ff.bin');
  t.true(treeFull.body_text.includes('part 1999 \uFFFD \uFFFD'), 'the last part is in the text');
  t.false((await textOf(app, key, tree.id)).includes('\\u0000'));

  // The raw bytes are what was sent, after our Return-Path: and Received: header fields.
  for (const [item, sent] of [[nul, nulMessage], [tree, many]] as const) {
    const res = await fetch(`${app.base}/v1/emails/${item.id}/raw`, { headers: { authorization: `Bearer ${key}` } });
    t.is(res.status, 200);
    const raw = Buffer.from(await res.arrayBuffer());
    t.is(raw.subarray(0, 14).toString('latin1'), 'Return-Path: <', 'our header fields come first');
    t.true(raw.subarray(raw.length - sent.length).equals(sent), 'then the message byte for byte');
  }
  // Search reads the same text.
  t.is((await app.get(`/v1/emails?q=${encodeURIComponent('subject')}`, key)).body.data.length, 1);
});

test('API mail with NUL in its text is accepted and stored with U+FFFD, beside ordinary mail of the same group', async (t) => {
  const app = await startTestApp(t);
  const inbox = await makeInbox(app);
  const hostile = inboundBody(inbox.address, {
    message_id: '<nul\u0000id@sender.example>', subject: 'api\u0000subject', from_name: 'A\u0000B', body_text: 'text\u0000body', body_html: '<p>h\u0000</p>',
    headers: { 'x-nul': 'v\u0000w', 'x-list': ['a\u0000', 'b'] },
    attachments: [{ filename: 'f\u0000.txt', content_type: 'text/plain', content: Buffer.from('bytes\u0000kept').toString('base64') }],
  });
  // Posted together, so on PostgreSQL they share one group commit: the hostile one must not fail the other.
  const [a, b] = await Promise.all([postInbound(app, inbox.key, hostile), postInbound(app, inbox.key, inboundBody(inbox.address, { subject: 'plain api' }))]);
  t.is(a.status, 200, JSON.stringify(a.body));
  t.is(b.status, 200, JSON.stringify(b.body));
  const listed = await waitForEmails(app, inbox.key, 2);
  const item = listed.find((e) => e.subject.startsWith('api'));
  const full = (await app.get(`/v1/emails/${item.id}`, inbox.key)).body.data;
  t.like(full, { subject: 'api\uFFFDsubject', from_name: 'A\uFFFDB', body_text: 'text\uFFFDbody', body_html: '<p>h\uFFFD</p>', message_id: '<nul\uFFFDid@sender.example>' });
  t.deepEqual([full.headers['x-nul'], full.headers['x-list']], ['v\uFFFDw', ['a\uFFFD', 'b']]);
  t.is(full.attachments[0].filename, 'f\uFFFD.txt');
  const link = (await app.get(`/v1/emails/${item.id}/attachments/${full.attachments[0].id}`, inbox.key)).body.data.url as string;
  const content = await fetch(app.base + new URL(link).pathname.replace(/^\/api/, ''));
  t.is(Buffer.from(await content.arrayBuffer()).toString('latin1'), 'bytes\u0000kept', 'attachment bytes are bytes, never changed');
});
