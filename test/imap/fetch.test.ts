import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp, imapClient, PASSWORD, rawImap } from '../helpers/imap.js';
import { sendMail } from '../helpers/smtp.js';

const STRUCTURED = [
  'From: "Ann Sender" <ann@client.example>',
  'To: Bob <bob@elsewhere.example>, team: c@d.example;',
  'Subject: Structure',
  'Message-ID: <structure-1@client.example>',
  'Date: Mon, 05 Jan 2026 10:00:00 +0000',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="outer"',
  '',
  'preamble',
  '--outer',
  'Content-Type: multipart/alternative; boundary="inner"',
  '',
  '--inner',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Caf=C3=A9 text',
  '--inner',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>html</p>',
  '--inner--',
  '--outer',
  'Content-Type: application/octet-stream; name="a.bin"',
  'Content-Disposition: attachment; filename="a.bin"',
  'Content-Transfer-Encoding: base64',
  '',
  'AAECAwQ=',
  '--outer',
  'Content-Type: message/rfc822',
  '',
  'From: inner@x.example',
  'Subject: Inner',
  '',
  'inner body',
  '--outer--',
  '',
].join('\r\n');

test('FETCH of an SMTP message: bytes as received, sections, partials, MIME, BINARY, ENVELOPE and BODYSTRUCTURE', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await sendMail(app.smtpPort, { from: 'ann@client.example', to: [box.address] }, STRUCTURED);
  const [item] = await waitForEmails(app, box.key, 1, '', 60_000);
  const raw = await fetch(`${app.base}/v1/emails/${item.id}/raw`, { headers: { authorization: `Bearer ${box.key}` } }).then(async (r) => Buffer.from(await r.arrayBuffer()));
  t.true(raw.toString('latin1').endsWith(STRUCTURED), 'the stored bytes are the message as received (after our Received: header)');

  const client = await imapClient(t, imapPort, box.address);
  const lock = await client.getMailboxLock('INBOX');
  try {
    const m = await client.fetchOne('1', {
      source: true, size: true, envelope: true, bodyStructure: true, internalDate: true,
      bodyParts: ['1.1', '1.2', '2.mime', '3.header', '3.text'], headers: ['subject', 'message-id'],
    });
    if (!m) throw new Error('no message');
    t.deepEqual(m.source, raw, 'BODY[] is exactly GET /raw');
    t.is(m.size, raw.length, 'RFC822.SIZE is the byte length');
    t.is(m.envelope?.subject, 'Structure');
    t.is(m.envelope?.messageId, '<structure-1@client.example>');
    t.deepEqual(m.envelope?.from, [{ name: 'Ann Sender', address: 'ann@client.example' }]);
    t.is(m.envelope?.to?.[0]?.address, 'bob@elsewhere.example');
    t.is((m.internalDate as Date).toISOString(), item.received_at, 'INTERNALDATE is received_at');
    t.is(m.bodyParts?.get('1.1')?.toString(), 'Caf=C3=A9 text');
    t.is(m.bodyParts?.get('1.2')?.toString(), '<p>html</p>');
    t.regex(m.bodyParts?.get('2.mime')?.toString() ?? '', /^Content-Type: application\/octet-stream; name="a.bin"\r\n.*\r\n\r\n$/s);
    t.regex(m.bodyParts?.get('3.header')?.toString() ?? '', /Subject: Inner\r\n\r\n$/);
    t.is(m.bodyParts?.get('3.text')?.toString(), 'inner body');
    t.regex(m.headers?.toString() ?? '', /^Subject: Structure\r\nMessage-ID: <structure-1@client.example>\r\n\r\n$/);
    const bs = m.bodyStructure!;
    t.is(bs.type, 'multipart/mixed');
    t.deepEqual(bs.childNodes?.map((n) => n.type), ['multipart/alternative', 'application/octet-stream', 'message/rfc822']);
    t.deepEqual(bs.childNodes?.[0].childNodes?.map((n) => [n.part, n.type, n.encoding]), [['1.1', 'text/plain', 'quoted-printable'], ['1.2', 'text/html', '7bit']]);
    t.is(bs.childNodes?.[1].disposition, 'attachment');
    t.is(bs.childNodes?.[1].dispositionParameters?.filename, 'a.bin');
    t.is(bs.childNodes?.[2].envelope?.subject, 'Inner');
  } finally {
    lock.release();
  }

  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('b', 'EXAMINE INBOX');
  t.regex(await c.cmd('c', 'FETCH 1 (BINARY.PEEK[1.1] BINARY.SIZE[2])'), /BINARY\[1\.1\] \{10\}\r\nCaf\xc3\xa9 text BINARY\.SIZE\[2\] 5\)/);
  t.regex(await c.cmd('d', 'FETCH 1 BINARY.PEEK[2]'), /BINARY\[2\] ~\{5\}\r\n\x00\x01\x02\x03\x04\)/, 'bytes with NUL come as literal8');
  t.true((await c.cmd('e', 'FETCH 1 BODY.PEEK[]<3.9>')).includes(`BODY[]<3> {9}\r\n${raw.toString('latin1', 3, 12)})`));
  const header = raw.toString('latin1', 0, raw.indexOf('\r\n\r\n'));
  const others = [...new Set(header.split('\r\n').filter((l) => /^[^\s:]+:/.test(l)).map((l) => l.slice(0, l.indexOf(':')).toUpperCase()))].filter((n) => n !== 'SUBJECT');
  t.regex(await c.cmd('f', `FETCH 1 (BODY.PEEK[HEADER.FIELDS.NOT (${others.join(' ')})])`), /\{22\}\r\nSubject: Structure\r\n\r\n\)/);
  t.regex(await c.cmd('g', 'FETCH 1 BODY.PEEK[9]'), /BODY\[9\] \{0\}\r\n\)/, 'a missing part is empty');
  t.regex(await c.cmd('h', 'FETCH 1 (FLAGS)'), /\* 1 FETCH \(FLAGS \(\)\)/, 'EXAMINE and PEEK leave \\Seen alone');
  t.regex(await c.cmd('i', 'FETCH 2 FLAGS'), /^i BAD/m, 'a message number past the end');
  t.regex(await c.cmd('j', 'UID FETCH 1:* (FLAGS) (CHANGEDSINCE 1)'), /\* 1 FETCH \(UID 1 FLAGS \(\) MODSEQ \(\d+\)\)/);
  await c.cmd('k', 'SELECT INBOX');
  t.regex(await c.cmd('l', 'FETCH 1 BODY[TEXT]<0.8>'), /FLAGS \(\\Seen\)/, 'a non-PEEK body fetch sets \\Seen');
  t.true((await app.get(`/v1/emails/${item.id}`, box.key)).body.data.is_read);
});

test('API mail is rendered once: its bytes over IMAP and GET /raw never change', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'Rendered', body_text: 'plain body', body_html: '<b>html body</b>' });
  const [item] = await waitForEmails(app, box.key, 1);
  const rawOf = () => fetch(`${app.base}/v1/emails/${item.id}/raw`, { headers: { authorization: `Bearer ${box.key}` } }).then(async (r) => Buffer.from(await r.arrayBuffer()));
  const client = await imapClient(t, imapPort, box.address);
  const lock = await client.getMailboxLock('INBOX');
  try {
    const first = (await client.fetchOne('1', { source: true, size: true }))!;
    const second = (await client.fetchOne('1', { source: true }))!;
    t.deepEqual(first.source, second.source);
    t.deepEqual(await rawOf(), first.source);
    t.is(first.size, first.source!.length);
  } finally {
    lock.release();
  }
});
