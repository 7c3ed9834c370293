import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/app.js';
import { imapApp, PASSWORD } from '../helpers/imap.js';
import { deliver, listAll } from '../helpers/emails.js';
import { sendOn, smtpClient } from '../helpers/smtp.js';
import { lastCheck } from '../helpers/poll.js';

const run = promisify(execFile);
const TOTAL = 200;
const VIA_API = 30;

/** One of four shapes, chosen by index: plain, multipart/alternative, an attachment, non-ASCII headers. */
function rawMessage(i: number, to: string, messageId: string): string {
  const head = [`From: Sender ${i} <s${i}@client.example>`, `To: ${to}`, `Date: Mon, 1 Jan 2024 12:${String(i % 60).padStart(2, '0')}:00 +0000`, `Message-ID: ${messageId}`, 'MIME-Version: 1.0'];
  switch (i % 4) {
    case 0:
      return [...head, `Subject: plain ${i}`, 'Content-Type: text/plain; charset=us-ascii', '', `Plain body ${i}.`, '.leading dot line', ''].join('\r\n');
    case 1:
      return [...head, `Subject: alternative ${i}`, 'Content-Type: multipart/alternative; boundary="alt-b"', '', '--alt-b', 'Content-Type: text/plain; charset=utf-8', '',
        `text ${i}`, '--alt-b', 'Content-Type: text/html; charset=utf-8', '', `<p>html ${i}</p>`, '--alt-b--', ''].join('\r\n');
    case 2: {
      const data = Buffer.alloc(3000 + i, i & 0xff).toString('base64').replace(/.{76}/g, '$&\r\n');
      return [...head, `Subject: attachment ${i}`, 'Content-Type: multipart/mixed; boundary="mix-b"', '', '--mix-b', 'Content-Type: text/plain', '', 'see attached',
        '--mix-b', `Content-Type: application/octet-stream; name="f${i}.bin"`, 'Content-Transfer-Encoding: base64', `Content-Disposition: attachment; filename="f${i}.bin"`, '', data, '--mix-b--', ''].join('\r\n');
    }
    default:
      return [...head, `Subject: =?UTF-8?B?${Buffer.from(`Grüße ${i} — 日本語`).toString('base64')}?=`, 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit', '', `Bonjour ${i}, ça va? ✓`, ''].join('\r\n');
  }
}

/** The Message-ID header of a stored file (mbsync stores LF line ends). */
const messageIdOf = (bytes: Buffer) => /^Message-ID: (<[^>]+>)/im.exec(bytes.toString('latin1'))?.[1] ?? '';

test('mbsync pulls 200 mixed messages byte for byte, and pushes flag changes and a deletion back', async (t) => {
  t.timeout(240_000);
  const { app, box, imapPort } = await imapApp(t);
  const cert = join(app.dataDir, 'tls', 'self-signed.crt');
  t.true(existsSync(cert), 'the self-signed certificate is on disk');

  // Most mail arrives over SMTP, a few batches per connection; the rest through the API.
  for (let i = 0; i < TOTAL - VIA_API;) {
    const conn = await smtpClient(app.smtpPort);
    for (let n = 0; n < 20 && i < TOTAL - VIA_API; n++, i++) {
      await sendOn(conn, { from: `s${i}@client.example`, to: [box.address] }, rawMessage(i, box.address, `<smtp${i}@client.example>`));
    }
    conn.quit();
  }
  for (let i = 0; i < VIA_API; i++) {
    await deliver(app, box.key, box.address, i % 2 ? { subject: `Ünïcode ${i} ✉`, body_html: `<b>${i}</b>` } : {});
  }
  // Storage is asynchronous: wait (bounded) until every message is listed.
  const emails = await lastCheck(() => listAll(app, box.key), { timeoutMs: 90_000, everyMs: 250, done: (listed) => listed.length >= TOTAL });
  t.is(emails.length, TOTAL);

  const dir = tempDir(t, 'mailstead-mbsync-');
  const maildir = join(dir, 'mail');
  const rc = join(dir, 'mbsyncrc');
  writeFileSync(rc, [
    'IMAPAccount mailstead', 'Host 127.0.0.1', `Port ${imapPort}`, `User ${box.address}`, `Pass ${PASSWORD}`, 'SSLType IMAPS', // isync 1.4 spells it SSLType (1.5 renamed it TLSType)
    'SystemCertificates no', `CertificateFile ${cert}`, '',
    'IMAPStore far', 'Account mailstead', '',
    'MaildirStore near', `Path ${maildir}/`, `Inbox ${maildir}/INBOX`, '',
    'Channel inbox', 'Far :far:INBOX', 'Near :near:INBOX', 'Create Near', 'Sync All', 'Expunge Both', `SyncState ${dir}/state/`, '',
  ].join('\n'));
  mkdirSync(join(dir, 'state'));
  mkdirSync(maildir);
  const mbsync = () => run('/usr/bin/mbsync', ['-c', rc, 'inbox'], { timeout: 90_000 });

  await mbsync();
  const cur = () => [...readdirSync(join(maildir, 'INBOX', 'cur')).map((f) => join(maildir, 'INBOX', 'cur', f)), ...readdirSync(join(maildir, 'INBOX', 'new')).map((f) => join(maildir, 'INBOX', 'new', f))];
  const files = cur();
  t.is(files.length, TOTAL, 'every message reached the Maildir');

  // The list has no message_id; each get has it (angle brackets trimmed on both sides to compare).
  const bare = (id: string) => id.replace(/^<|>$/g, '');
  const byMessageId = new Map<string, any>();
  for (const e of emails) byMessageId.set(bare((await app.get(`/v1/emails/${e.id}`, box.key)).body.data.message_id), e);
  let same = 0;
  let logged = false;
  for (const file of files) {
    const bytes = readFileSync(file);
    const email = byMessageId.get(bare(messageIdOf(bytes)));
    if (!email) { t.fail(`no API email for ${file}`); continue; }
    const raw = await app.request('GET', `/v1/emails/${email.id}/raw`, { key: box.key });
    // A Maildir holds LF line ends: mbsync turns the wire's CRLF into LF, and it adds one header of
    // its own at the end of the header block (X-TUID, its crash-recovery marker); nothing else changes.
    const expected = Buffer.from(String(raw.body).replace(/\r\n/g, '\n'), 'utf8');
    const text = bytes.toString('latin1');
    const tuid = /^X-TUID: [A-Za-z0-9+/]{12}\n(?=\n)/m.exec(text);
    const stored = tuid ? Buffer.from(text.slice(0, tuid.index) + text.slice(tuid.index + tuid[0].length), 'latin1') : bytes;
    if (Buffer.compare(stored, expected) === 0) same++;
    else if (!logged && (logged = true)) t.log(`first difference: ${messageIdOf(bytes)}`, JSON.stringify(text.slice(0, 800)), JSON.stringify(expected.toString('latin1').slice(0, 800)));
  }
  t.is(same, TOTAL, 'every file matches GET /v1/emails/{id}/raw');

  // Local changes: one read, one flagged, one trashed; mbsync pushes them and expunges.
  const pick = (n: number) => files.find((f) => messageIdOf(readFileSync(f)) === `<smtp${n}@client.example>`)!;
  const mark = (file: string, flag: string) => {
    const base = file.replace(/\/new\//, '/cur/').replace(/:2,[A-Z]*$/, '');
    const flags = (/:2,([A-Z]*)$/.exec(file)?.[1] ?? '') + flag;
    renameSync(file, `${base}:2,${[...flags].sort().join('')}`);
  };
  const [read, flag, trash] = [pick(1), pick(2), pick(3)];
  mark(read, 'S');
  mark(flag, 'F');
  mark(trash, 'T');
  await mbsync();
  const id = (n: number) => (byMessageId.get(`smtp${n}@client.example`)).id;
  t.true((await app.get(`/v1/emails/${id(1)}`, box.key)).body.data.is_read, 'S became is_read');
  const flagged = await app.get(`/v1/emails/${id(2)}`, box.key);
  t.deepEqual(flagged.body.data.flags, ['\\Flagged'], 'F became \\Flagged');
  t.is((await app.get(`/v1/emails/${id(3)}`, box.key)).status, 404, 'the trashed message is gone');
  t.is(cur().length, TOTAL - 1);
});
