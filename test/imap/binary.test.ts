import test from 'ava';
import { appendRaw, fetchedValue, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// BINARY (RFC 3516): APPEND of a literal8 holding NUL stores such a part base64-encoded (as Dovecot
// does), so BODY[] never carries NUL and BINARY[] gives the client's bytes back in literal8;
// BINARY[] decodes quoted-printable as RFC 2045 6.7 says (padding dropped, soft breaks joined).

const QP = [
  'From: a@x.example', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=us-ascii', 'Content-Transfer-Encoding: quoted-printable', '',
  'hello  ', 'bar=', '', 'foo\t=', 'bar', 'foo\t \t= ', '=62', 'foo = \t', 'bar', 'caf=C3=A9', '',
].join('\r\n');

test('APPEND of a literal8 with NUL: the part is stored base64-encoded; BINARY[1] returns its bytes in literal8', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  const body = Buffer.from([0x20, 0x2d, 0x00, 0xff, 0x0d, 0x0a]);
  const msg = Buffer.concat([Buffer.from('From: a@x.example\r\nSubject: nul\r\nMIME-Version: 1.0\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n'), body]);
  t.regex(await appendRaw(c, 'a', 'INBOX', msg, { binary: true }), /^a OK \[APPENDUID \d+ \d+\]/);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  const reply = await c.cmd('f', 'FETCH 1 (BODY.PEEK[1] BINARY.SIZE[1] BINARY.PEEK[1])');
  t.is(fetchedValue(reply, 'BODY[1]').trim(), body.toString('base64'), 'BODY[1] is the part as stored, base64');
  t.regex(reply, /BINARY\[1\] ~\{6\}\r\n/, 'BINARY with NUL goes as literal8');
  t.regex(reply, /BINARY\.SIZE\[1\] 6/);
  t.is(fetchedValue(reply, 'BINARY[1]'), body.toString('latin1'));
  t.regex(await c.cmd('e', 'FETCH 1 ENVELOPE'), /ENVELOPE \(NIL "nul"/, 'its header fields are read as usual');
  t.regex(await c.cmd('h', 'FETCH 1 BODY.PEEK[HEADER]'), /Content-Transfer-Encoding: base64\r\n\r\n/);

  // A part of a multipart without a Content-Transfer-Encoding field gets one.
  const multi = Buffer.concat([Buffer.from('Subject: multi\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nplain\r\n--b\r\nContent-Type: application/x-raw\r\n\r\n'), body, Buffer.from('\r\n--b--\r\n')]);
  t.regex(await appendRaw(c, 'm', 'INBOX', multi, { binary: true }), /^m OK/);
  const parts = await c.cmd('g', 'FETCH 2 (BODY.PEEK[1] BODY.PEEK[2.MIME] BINARY.PEEK[2])');
  t.is(fetchedValue(parts, 'BODY[1]'), 'plain', 'the other part as sent');
  t.is(fetchedValue(parts, 'BODY[2.MIME]'), 'Content-Type: application/x-raw\r\nContent-Transfer-Encoding: base64\r\n\r\n');
  t.is(fetchedValue(parts, 'BINARY[2]'), body.toString('latin1'));
});

test('BINARY of a quoted-printable part drops trailing whitespace and joins soft line breaks', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await appendRaw(c, 'a', 'INBOX', QP), /^a OK/);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  const reply = await c.cmd('f', 'FETCH 1 (BINARY.PEEK[1] BINARY.SIZE[1])');
  const want = 'hello\r\nbar\r\nfoo\tbar\r\nfoo\t \tb\r\nfoo bar\r\ncaf\xc3\xa9\r\n';
  t.is(fetchedValue(reply, 'BINARY[1]'), want);
  t.regex(reply, new RegExp(`BINARY\\.SIZE\\[1\\] ${want.length}`));
});
