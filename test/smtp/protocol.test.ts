import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { createAlias } from '../helpers/mailboxes.js';
import { provision, rawSession, sendMail, waitForEmails, type RawSession } from '../helpers/smtp.js';

const SIZE = 25 * 1024 * 1024;

async function session(t: import('ava').ExecutionContext, port: number, replyTimeoutMs?: number): Promise<RawSession> {
  const s = await rawSession(port, replyTimeoutMs);
  t.teardown(() => s.close());
  return s;
}

test('banner and EHLO: hostname, SIZE 25 MB, 8BITMIME, SMTPUTF8, PIPELINING; STARTTLS even without certificate files (self-signed), no AUTH', async (t) => {
  const app = await startTestApp(t);
  const s = await session(t, app.smtpPort);
  t.regex(s.greeting, /^220 mx\.mailstead\.test ESMTP Mailstead/);
  const ehlo = await s.command('EHLO client.example');
  const lines = ehlo.split('\r\n').map((l) => l.slice(4));
  t.regex(lines[0], /^mx\.mailstead\.test /);
  for (const feature of ['PIPELINING', '8BITMIME', 'SMTPUTF8', `SIZE ${SIZE}`]) t.true(lines.includes(feature), feature);
  t.true(lines.includes('STARTTLS'));
  t.false(lines.some((l) => l.startsWith('AUTH')));
  t.regex(await s.command('AUTH PLAIN AGJvYgBzZWNyZXQ='), /^5\d\d /);
  t.regex(await s.command('QUIT'), /^221 /);
});

test('never an open relay: outside domains, source routes, percent hack, bang paths, quoted local parts and IP literals are refused', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'relay.test', ['postbox']);
  // With a catch-all in place nothing addressed to relay.test would be "unknown": the refusals below are policy.
  const alias = await createAlias(app, key, 'relay.test', { catch_all: true, goto: 'postbox@relay.test' });
  t.is(alias.body.status, 'completed');
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  // The sender claiming to be local changes nothing.
  t.regex(await s.command('MAIL FROM:<postbox@relay.test>'), /^250 /);
  const refused: Array<[string, RegExp]> = [
    ['<victim@outside.example>', /^550 5\.7\.1 relaying denied/],
    ['<@relay.test:victim@outside.example>', /^550 5\.7\.1 relaying denied/],
    ['<@relay.test,@mx.relay.test:victim@outside.example>', /^550 5\.7\.1 relaying denied/],
    ['<victim%outside.example@relay.test>', /^550 5\.7\.1 relaying denied/],
    ['<outside.example!victim@relay.test>', /^550 5\.7\.1 relaying denied/],
    ['<"victim%outside.example"@relay.test>', /^550 5\.7\.1 relaying denied/],
    ['<"victim@outside.example"@relay.test>', /^5\d\d /],
    ['<victim@[192.0.2.1]>', /^550 5\.7\.1 relaying denied/],
    ['<victim@relay.test.outside.example>', /^550 5\.7\.1 relaying denied/],
  ];
  for (const [rcpt, reply] of refused) t.regex(await s.command(`RCPT TO:${rcpt}`), reply, rcpt);
  t.regex(await s.command('DATA'), /^503 /, 'nothing was accepted, so there is no transaction');
  // The catch-all and a source route that ends here still work.
  t.regex(await s.command('RCPT TO:<anything@relay.test>'), /^250 /);
  t.regex(await s.command('RCPT TO:<@outside.example:postbox@relay.test>'), /^250 /);
});

test('an unknown mailbox is 550 5.1.1; the 101st recipient is 452 4.5.3 and the message still goes to the first 100', async (t) => {
  const app = await startTestApp(t);
  const { key, mailboxes } = await provision(app, 'many.test', ['sink']);
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  await s.command('MAIL FROM:<x@example.org>');
  t.regex(await s.command('RCPT TO:<nobody@many.test>'), /^550 5\.1\.1 /);
  t.regex(await s.command('RCPT TO:<"nobody"@many.test>'), /^550 5\.1\.1 /, 'quotes that change nothing: the same unknown user');
  t.regex(await s.command('RCPT TO:<"sink"@many.test>'), /^250 /, 'and the same mailbox (RFC 5321 section 4.1.2)');
  t.regex(await s.command('RSET'), /^250 /);
  await s.command('MAIL FROM:<x@example.org>');
  const alias = await createAlias(app, key, 'many.test', { catch_all: true, goto: 'sink@many.test' });
  t.is(alias.body.status, 'completed');
  // Pipelined, as a real MTA would send them.
  s.write(Array.from({ length: 101 }, (_, i) => `RCPT TO:<r${i}@many.test>\r\n`).join(''));
  const replies: string[] = [];
  for (let i = 0; i < 101; i++) replies.push(await s.reply());
  t.true(replies.slice(0, 100).every((r) => r.startsWith('250 ')));
  t.regex(replies[100], /^452 4\.5\.3 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command('Subject: crowd\r\nMessage-ID: <crowd-1@example.org>\r\n\r\nhello all\r\n.'), /^250 /);
  const items = await waitForEmails(app, key, 1);
  t.is(items.length, 1, 'one mailbox behind all recipients gets one copy');
  t.is(items[0].mailbox_id, mailboxes['sink@many.test']);
});

test('SIZE: a declared size over 25 MB is refused at MAIL, a longer DATA gets 552 and nothing is stored, the session goes on', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'size.test', ['big']);
  // 25 MB through a server that shares this process with the file's other tests: time for the reply.
  const s = await session(t, app.smtpPort, 60_000);
  await s.command('EHLO client.example');
  t.regex(await s.command(`MAIL FROM:<x@example.org> SIZE=${SIZE + 1}`), /^552 /);
  t.regex(await s.command('MAIL FROM:<x@example.org>'), /^250 /);
  t.regex(await s.command('RCPT TO:<big@size.test>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  s.write('Subject: too big\r\nMessage-ID: <big-1@example.org>\r\n\r\n');
  const line = 'x'.repeat(998) + '\r\n';
  const chunk = line.repeat(1024);
  for (let sent = 0; sent <= SIZE; sent += chunk.length) s.write(chunk);
  t.regex(await s.command('.'), /^552 5\.3\.4 /);
  // The same session delivers a normal message afterwards.
  t.regex(await s.command('MAIL FROM:<x@example.org>'), /^250 /);
  t.regex(await s.command('RCPT TO:<big@size.test>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command('Subject: small\r\nMessage-ID: <small-1@example.org>\r\n\r\nfits\r\n.'), /^250 /);
  const items = await waitForEmails(app, key, 1);
  t.deepEqual(items.map((i) => i.subject), ['small']);
  const leftovers = (await import('node:fs')).readdirSync(`${app.dataDir}/tmp`).filter((f) => f.startsWith('smtp-'));
  t.deepEqual(leftovers, [], 'the oversized spool file is gone');
});

test('a message larger than the memory threshold is spooled to disk and comes back byte for byte', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'spool.test', ['files']);
  const payload = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64').replace(/.{76}/g, '$&\r\n');
  const raw = `From: x@example.org\r\nSubject: large\r\nMessage-ID: <large-1@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee attachment\r\n--b\r\nContent-Type: application/octet-stream; name=blob.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n${payload}\r\n--b--\r\n`;
  const res = await sendMail(app.smtpPort, { from: 'x@example.org', to: ['files@spool.test'] }, raw);
  t.regex(res.response, /^250 /);
  const [item] = await waitForEmails(app, key, 1);
  const e = (await app.get(`/v1/emails/${item.id}`, key)).body.data;
  t.deepEqual(e.attachments.map((a: any) => [a.filename, a.size]), [['blob.bin', 3 * 1024 * 1024]]);
  const back = await fetch(`${app.base}/v1/emails/${item.id}/raw`, { headers: { authorization: `Bearer ${key}` } });
  const bytes = Buffer.from(await back.arrayBuffer()).toString('latin1');
  t.true(bytes.startsWith('Return-Path: <x@example.org>\r\nReceived: '));
  t.true(bytes.endsWith(raw));
});

test('over quota: 452 4.2.2 at RCPT for a full mailbox, 552 5.2.2 after DATA when the message does not fit', async (t) => {
  const app = await startTestApp(t);
  const { mailboxes } = await provision(app, 'quota.test', ['full', 'tight']);
  await app.app.db.updateTable('mailboxes').set({ quota_mb: 1, used_bytes: 1024 * 1024 }).where('id', '=', mailboxes['full@quota.test']).execute();
  await app.app.db.updateTable('mailboxes').set({ quota_mb: 1, used_bytes: 1024 * 1024 - 2000 }).where('id', '=', mailboxes['tight@quota.test']).execute();
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  await s.command('MAIL FROM:<x@example.org>');
  t.regex(await s.command('RCPT TO:<full@quota.test>'), /^452 4\.2\.2 /);
  t.regex(await s.command('RCPT TO:<tight@quota.test>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command(`Subject: heavy\r\n\r\n${'y'.repeat(5000)}\r\n.`), /^552 5\.2\.2 /);
  await s.command('MAIL FROM:<x@example.org> SIZE=5000');
  t.regex(await s.command('RCPT TO:<tight@quota.test>'), /^452 4\.2\.2 /, 'a declared SIZE that does not fit is refused up front');
});

test('per-address connection limit: the connection past it gets 421 and the others keep working', async (t) => {
  const app = await startTestApp(t);
  const open: RawSession[] = [];
  for (let i = 0; i < 20; i++) open.push(await session(t, app.smtpPort));
  t.true(open.every((s) => s.greeting.startsWith('220 ')));
  const extra = await session(t, app.smtpPort);
  t.regex(extra.greeting, /^421 4\.7\.0 /);
  t.regex(await open[19].command('NOOP'), /^250 /);
  open[0].close();
  // The slot is released once the server saw the close.
  const deadline = Date.now() + 10_000;
  let again: RawSession;
  for (;;) {
    again = await session(t, app.smtpPort);
    if (again.greeting.startsWith('220 ') || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.regex(again.greeting, /^220 /);
});

test('RSET drops the recipients of the transaction; a pipelined transaction gets its replies in order', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'pipe.test', ['one']);
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  await s.command('MAIL FROM:<x@example.org>');
  await s.command('RCPT TO:<one@pipe.test>');
  t.regex(await s.command('RSET'), /^250 /);
  t.regex(await s.command('DATA'), /^503 /);
  s.write('MAIL FROM:<x@example.org>\r\nRCPT TO:<nobody@pipe.test>\r\nRCPT TO:<one@pipe.test>\r\nDATA\r\n');
  t.regex(await s.reply(), /^250 /);
  t.regex(await s.reply(), /^550 5\.1\.1 /);
  t.regex(await s.reply(), /^250 /);
  t.regex(await s.reply(), /^354 /);
  s.write('Subject: piped\r\nMessage-ID: <pipe-1@example.org>\r\n\r\n..a line starting with a dot\r\n.\r\nQUIT\r\n');
  t.regex(await s.reply(), /^250 /);
  t.regex(await s.reply(), /^221 /);
  const [item] = await waitForEmails(app, key, 1);
  const e = (await app.get(`/v1/emails/${item.id}`, key)).body.data;
  t.is(e.body_text, '.a line starting with a dot\n', 'dot-stuffing is undone');
});

test('MAIL and RCPT parameters of extensions not offered are refused with 555 5.5.4; offered ones work', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'params.test', ['one']);
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  t.regex(await s.command('MAIL FROM:<x@example.org> FOO=BAR'), /^555 5\.5\.4 unsupported parameter FOO/);
  // DSN is not offered, so its parameters are refused too.
  t.regex(await s.command('MAIL FROM:<x@example.org> RET=HDRS'), /^555 5\.5\.4 /);
  t.regex(await s.command('MAIL FROM:<x@example.org> SIZE=1000 BODY=8BITMIME SMTPUTF8'), /^250 /);
  t.regex(await s.command('RCPT TO:<one@params.test> NOTIFY=NEVER'), /^555 5\.5\.4 unsupported parameter NOTIFY/);
  t.regex(await s.command('RCPT TO:<one@params.test>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command('Subject: with parameters\r\n\r\nbody\r\n.'), /^250 /);
  const [item] = await waitForEmails(app, key, 1);
  t.is(item.subject, 'with parameters');
});

test('RCPT TO:<Postmaster> without a domain reaches postmaster@ the server hostname, or is an unknown user when nobody hosts it', async (t) => {
  const app = await startTestApp(t);
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  await s.command('MAIL FROM:<x@example.org>');
  t.regex(await s.command('RCPT TO:<Postmaster>'), /^550 5\.1\.1 /, 'the hostname is not hosted: unknown, not a relay');
  const { key } = await provision(app, 'mx.mailstead.test', ['postmaster']);
  t.regex(await s.command('RCPT TO:<Postmaster>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command('Subject: to the postmaster\r\n\r\nhello\r\n.'), /^250 /);
  const [item] = await waitForEmails(app, key, 1);
  t.is(item.subject, 'to the postmaster');
  t.is(item.to_email, 'postmaster@mx.mailstead.test');
});

test('EXPN is 502 5.5.1 (not offered), not 500; VRFY promises nothing', async (t) => {
  const app = await startTestApp(t);
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  t.regex(await s.command('EXPN staff'), /^502 5\.5\.1 /);
  t.regex(await s.command('VRFY someone'), /^252 /);
  t.regex(await s.command('NOOP'), /^250 /);
});

test('non-ASCII addresses need SMTPUTF8 on MAIL (553 5.6.7 without it); with it, UTF-8 mail is delivered', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'utf8.test', ['inbox']);
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  t.regex(await s.command('MAIL FROM:<jürgen@example.org>'), /^553 5\.6\.7 /);
  t.regex(await s.command('MAIL FROM:<plain@example.org>'), /^250 /);
  t.regex(await s.command('RCPT TO:<jürgen@utf8.test>'), /^553 5\.6\.7 /);
  t.regex(await s.command('RSET'), /^250 /);
  t.regex(await s.command('MAIL FROM:<jürgen@example.org> SMTPUTF8'), /^250 /);
  // Allowed in this transaction, but mailbox names are ASCII: nobody here has that address.
  t.regex(await s.command('RCPT TO:<jürgen@utf8.test>'), /^550 5\.1\.1 /);
  t.regex(await s.command('RCPT TO:<jürgen@elsewhere.example>'), /^550 5\.7\.1 relaying denied/);
  t.regex(await s.command('RCPT TO:<inbox@utf8.test>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command('From: Jürgen <jürgen@example.org>\r\nSubject: Grüße\r\n\r\nHallo\r\n.'), /^250 /);
  const [item] = await waitForEmails(app, key, 1);
  t.is(item.subject, 'Grüße');
  t.is(item.from_email, 'jürgen@example.org');
});

test('an IDN domain in punycode is plain ASCII: no SMTPUTF8 needed; in Unicode it needs SMTPUTF8 and reaches the same mailbox; a catch-all takes UTF-8 local parts', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'xn--bcher-kva.test', ['inbox']);
  const s = await session(t, app.smtpPort);
  await s.command('EHLO client.example');
  t.regex(await s.command('MAIL FROM:<shop@xn--bcher-kva.test>'), /^250 /);
  t.regex(await s.command('RCPT TO:<inbox@xn--bcher-kva.test>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command('Subject: punycode\r\n\r\nhello\r\n.'), /^250 /);
  t.regex(await s.command('MAIL FROM:<shop@example.org>'), /^250 /);
  t.regex(await s.command('RCPT TO:<inbox@bücher.test>'), /^553 5\.6\.7 /);
  t.regex(await s.command('RSET'), /^250 /);
  t.regex(await s.command('MAIL FROM:<shop@example.org> SMTPUTF8'), /^250 /);
  t.regex(await s.command('RCPT TO:<inbox@bücher.test>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command('Subject: unicode\r\n\r\nhello\r\n.'), /^250 /);
  // A UTF-8 local part is no mailbox name: unknown, until a catch-all takes it.
  t.regex(await s.command('MAIL FROM:<shop@example.org> SMTPUTF8'), /^250 /);
  t.regex(await s.command('RCPT TO:<Jörg@bücher.test>'), /^550 5\.1\.1 /);
  const alias = await createAlias(app, key, 'xn--bcher-kva.test', { catch_all: true, goto: 'inbox@xn--bcher-kva.test' });
  t.is(alias.body.status, 'completed');
  t.regex(await s.command('RCPT TO:<Jörg@bücher.test>'), /^250 /);
  t.regex(await s.command('DATA'), /^354 /);
  t.regex(await s.command('Subject: utf-8 local part\r\n\r\nhello\r\n.'), /^250 /);
  const items = await waitForEmails(app, key, 3);
  t.deepEqual(items.map((i) => [i.subject, i.to_email]).sort(), [
    ['punycode', 'inbox@xn--bcher-kva.test'], ['unicode', 'inbox@xn--bcher-kva.test'], ['utf-8 local part', 'jörg@xn--bcher-kva.test'],
  ]);
});
