import test from 'ava';
import { sql } from 'kysely';
import { startTestApp } from '../helpers/app.js';
import { createAlias } from '../helpers/mailboxes.js';
import { onPostgres } from '../helpers/pg.js';
import { listAll, provision, sendMail, smtpClient, sendOn, waitForEmails } from '../helpers/smtp.js';

const MESSAGE = [
  'From: "Alice Example" <alice@example.org>',
  'To: Bob <bob@deliver.test>',
  'Cc: carol@example.net, "Dan D." <dan@example.net>',
  'Subject: =?UTF-8?Q?Caf=C3=A9_tonight=3F?=',
  'Date: Tue, 01 Apr 2025 10:15:30 +0200',
  'Message-ID: <plain-1@example.org>',
  'X-Priority: 1',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: multipart/alternative; boundary="b2"',
  '',
  '--b2',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: 8bit',
  '',
  'Shall we meet at the café at eight?',
  '--b2',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>Shall we meet at the <b>café</b> at eight?</p>',
  '--b2--',
  '--b1',
  'Content-Type: text/plain; name="menu.txt"',
  'Content-Disposition: attachment; filename="menu.txt"',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('soup\nbread\n').toString('base64'),
  '--b1--',
  '',
].join('\r\n');

const deliversEveryField = test.macro(async (t, parserThreads: number) => {
  const app = await startTestApp(t, { parserThreads });
  const { key, mailboxes } = await provision(app, 'deliver.test', ['bob']);
  const res = await sendMail(app.smtpPort, { from: 'alice@example.org', to: ['bob@deliver.test'] }, MESSAGE);
  t.deepEqual(res.accepted, ['bob@deliver.test']);
  t.regex(res.response, /^250 2\.0\.0 Ok: queued as /);

  const [item] = await waitForEmails(app, key, 1);
  t.is(item.mailbox_id, mailboxes['bob@deliver.test']);
  t.is(item.to_email, 'bob@deliver.test');
  t.is(item.from_email, 'alice@example.org');
  t.is(item.from_name, 'Alice Example');
  t.is(item.subject, 'Café tonight?');
  t.is(item.received_at, '2025-04-01T08:15:30.000Z');
  t.is(item.is_read, false);
  t.is(item.has_attachments, true);
  t.true(item.size > MESSAGE.length, 'size counts the stored raw message with our Received: header');

  const got = await app.get(`/v1/emails/${item.id}`, key);
  t.is(got.status, 200);
  const e = got.body.data;
  t.is(e.message_id, '<plain-1@example.org>');
  t.deepEqual(e.cc, ['carol@example.net', 'dan@example.net']);
  t.deepEqual(e.bcc, []);
  t.is(e.body_text, 'Shall we meet at the café at eight?');
  t.is(e.body_html, '<p>Shall we meet at the <b>café</b> at eight?</p>');
  t.is(e.headers['x-priority'], '1');
  t.is(e.headers.subject, 'Café tonight?');
  t.regex(e.headers.received, /^from client\.example \(.*\[127\.0\.0\.1\]\)\tby mx\.mailstead\.test \(Mailstead\) with ESMTP id \S+\tfor <bob@deliver\.test>; /);
  t.deepEqual(e.attachments.map((a: any) => ({ filename: a.filename, content_type: a.content_type, size: a.size, content_id: a.content_id, disposition: a.disposition })), [
    { filename: 'menu.txt', content_type: 'text/plain', size: 11, content_id: null, disposition: 'attachment' },
  ]);
  t.is(e.auth.spf.result, 'none', 'the test DNS publishes no SPF record');
  t.is(e.auth.dkim.result, 'none');
  t.truthy(e.auth.dmarc);

  const raw = await app.request('GET', `/v1/emails/${item.id}/raw`, { key });
  t.is(raw.status, 200);
  t.is(raw.headers.get('content-type'), 'message/rfc822');
  const text = String(raw.body);
  t.regex(text, /^Return-Path: <alice@example\.org>\r\nReceived: from client\.example /, 'RFC 5321 section 4.4: the envelope sender, then our trace');
  t.true(text.endsWith(MESSAGE), 'the original bytes follow our trace header unchanged');
});

test('a message sent over SMTP is stored once its 250 came, with every field right, and its raw bytes kept', deliversEveryField, 0);
// As the built server runs: parsed in a parser thread, whose answer crosses to the storage thread as bytes.
test('the same, parsed in a parser thread', deliversEveryField, 1);

test('one message to several recipients: known ones get 250 and a copy, an unknown one 550 5.1.1', async (t) => {
  const app = await startTestApp(t);
  const { key, mailboxes } = await provision(app, 'multi.test', ['ann', 'ben']);
  const raw = 'From: x@example.org\r\nSubject: to many\r\nMessage-ID: <multi-1@example.org>\r\n\r\nhello\r\n';
  const res = await sendMail(app.smtpPort, { from: 'x@example.org', to: ['ann@multi.test', 'nobody@multi.test', 'BEN@Multi.Test'] }, raw);
  t.deepEqual(res.accepted.sort(), ['BEN@Multi.Test', 'ann@multi.test']);
  t.deepEqual(res.rejected, ['nobody@multi.test']);
  t.regex(res.rejectedErrors[0].response ?? '', /^550 5\.1\.1 /);
  const items = await waitForEmails(app, key, 2);
  t.deepEqual(items.map((i) => i.mailbox_id).sort(), [mailboxes['ann@multi.test'], mailboxes['ben@multi.test']].sort());
  t.deepEqual(items.map((i) => i.to_email).sort(), ['ann@multi.test', 'ben@multi.test']);
  for (const i of items) {
    const e = (await app.get(`/v1/emails/${i.id}`, key)).body.data;
    t.is(e.message_id, '<multi-1@example.org>');
    t.false('for' in e.headers, 'no Received "for" clause reveals the other recipients');
    t.notRegex(String(e.headers.received), /\tfor </);
  }
});

test('null sender (bounces) is accepted; the same Message-ID twice is accepted and stored once', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'bounce.test', ['pat']);
  const raw = 'From: MAILER-DAEMON@mx.example.net\r\nSubject: Undelivered\r\nMessage-ID: <dsn-1@mx.example.net>\r\n\r\nbounced\r\n';
  const client = await smtpClient(app.smtpPort);
  t.teardown(() => client.close());
  const first = await sendOn(client, { from: '', to: ['pat@bounce.test'] }, raw);
  t.regex(first.response, /^250 /);
  const second = await sendOn(client, { from: '', to: ['pat@bounce.test'] }, raw);
  t.regex(second.response, /^250 /, 'a duplicate is acknowledged (the sender must not retry it)');
  await waitForEmails(app, key, 1);
  // Another message behind the duplicate proves the worker got past both.
  await sendOn(client, { from: '', to: ['pat@bounce.test'] }, raw.replace('dsn-1', 'dsn-2'));
  const items = await waitForEmails(app, key, 2);
  t.is(items.length, 2);
  const all = await listAll(app, key);
  t.deepEqual(all.map((i) => i.subject), ['Undelivered', 'Undelivered']);
  const ids = await Promise.all(all.map(async (i) => (await app.get(`/v1/emails/${i.id}`, key)).body.data.message_id));
  t.deepEqual(ids.sort(), ['<dsn-1@mx.example.net>', '<dsn-2@mx.example.net>']);
  const e = (await app.get(`/v1/emails/${all[0].id}`, key)).body.data;
  t.is(e.from_email, 'MAILER-DAEMON@mx.example.net');
});

test('alias delivery: a copy per local destination mailbox, external destinations queued for forwarding', async (t) => {
  const app = await startTestApp(t);
  const { key, mailboxes } = await provision(app, 'alias.test', ['ops1', 'ops2']);
  const alias = await createAlias(app, key, 'alias.test', { address: 'team@alias.test', goto: ['ops1@alias.test', 'ops2@alias.test', 'pager@elsewhere.example'] });
  t.is(alias.body.status, 'completed', JSON.stringify(alias.body));
  const raw = 'From: boss@example.org\r\nTo: team@alias.test\r\nSubject: all hands\r\nMessage-ID: <alias-1@example.org>\r\n\r\nmeeting at 3\r\n';
  const res = await sendMail(app.smtpPort, { from: 'boss@example.org', to: ['team@alias.test'] }, raw);
  t.deepEqual(res.accepted, ['team@alias.test']);
  const items = await waitForEmails(app, key, 2);
  t.deepEqual(items.map((i) => i.mailbox_id).sort(), [mailboxes['ops1@alias.test'], mailboxes['ops2@alias.test']].sort());
  t.true(items.every((i) => i.subject === 'all hands' && i.to_email === 'team@alias.test'));
  // The forward is an outbound item (its delivery is test/outbound's); a DSN may follow it, as nothing resolves here.
  const forwards = await app.app.db.selectFrom('outbound').selectAll().where('kind', '=', 'forward').execute();
  t.deepEqual(forwards.map((f) => [f.rcpt_to, f.mail_from, f.via_domain]), [['pager@elsewhere.example', 'boss@example.org', 'alias.test']]);
});

test('catch-all delivery: an unknown local part of a domain with a catch-all is accepted into its mailbox', async (t) => {
  const app = await startTestApp(t);
  const { key, mailboxes } = await provision(app, 'catch.test', ['inbox']);
  const before = await sendMail(app.smtpPort, { from: 'x@example.org', to: ['random@catch.test'] }, 'Subject: early\r\n\r\nx\r\n').catch((err) => err);
  t.is(before.responseCode, 550, 'without a catch-all the unknown address is refused');
  const alias = await createAlias(app, key, 'catch.test', { catch_all: true, goto: 'inbox@catch.test' });
  t.is(alias.body.status, 'completed', JSON.stringify(alias.body));
  const res = await sendMail(app.smtpPort, { from: 'x@example.org', to: ['random@catch.test'] }, 'From: x@example.org\r\nSubject: caught\r\nMessage-ID: <catch-1@example.org>\r\n\r\nhi\r\n');
  t.deepEqual(res.accepted, ['random@catch.test']);
  const [item] = await waitForEmails(app, key, 1);
  t.is(item.mailbox_id, mailboxes['inbox@catch.test']);
  t.is(item.subject, 'caught');
  t.is(item.to_email, 'random@catch.test');
});

test('a storage failure answers 451 4.3.0 (the sender retries) and leaves nothing behind; the retry is stored', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'fail.test', ['vault']);
  const small = 'From: x@example.org\r\nSubject: retry me\r\nMessage-ID: <retry-1@example.org>\r\n\r\nsmall\r\n';
  // About 1 MB: past the in-memory threshold, so it is spooled to a file first.
  const large = `From: x@example.org\r\nSubject: retry me too\r\nMessage-ID: <retry-2@example.org>\r\n\r\n${Array.from({ length: 12_000 }, () => 'l'.repeat(80)).join('\r\n')}\r\n`;
  // SQLite: the acceptance journal's directory is replaced by a file. PostgreSQL: a trigger refuses
  // queue rows. Either way the write behind the 250 cannot happen.
  const fs = await import('node:fs');
  const journal = `${app.dataDir}/journal`;
  if (onPostgres) {
    await sql`CREATE FUNCTION fail_accepting() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'acceptance failure injected by the test'; END $$`.execute(app.app.db);
    await sql`CREATE TRIGGER fail_accepting BEFORE INSERT ON inbound FOR EACH ROW EXECUTE FUNCTION fail_accepting()`.execute(app.app.db);
  } else {
    fs.rmSync(journal, { recursive: true, force: true });
    fs.writeFileSync(journal, 'not a directory');
  }
  for (const raw of [small, large]) {
    const err = await sendMail(app.smtpPort, { from: 'x@example.org', to: ['vault@fail.test'] }, raw).catch((e) => e);
    t.is(err.responseCode, 451);
    t.regex(err.response, /^451 4\.3\.0 /);
  }
  t.deepEqual(fs.readdirSync(`${app.dataDir}/tmp`).filter((f) => f.startsWith('smtp-')), [], 'no spool file is left');
  t.deepEqual(fs.readdirSync(`${app.dataDir}/raw`), [], 'the large message\'s raw file went with its refusal');
  if (onPostgres) {
    await sql`DROP TRIGGER fail_accepting ON inbound`.execute(app.app.db);
  } else {
    fs.rmSync(journal);
    fs.mkdirSync(journal);
  }
  for (const raw of [small, large]) t.regex((await sendMail(app.smtpPort, { from: 'x@example.org', to: ['vault@fail.test'] }, raw)).response, /^250 /);
  const items = await waitForEmails(app, key, 2);
  t.deepEqual(items.map((i) => i.subject).sort(), ['retry me', 'retry me too']);
});
