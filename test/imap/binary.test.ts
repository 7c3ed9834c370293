import test from 'ava';
import { appendRaw, fetchedValue, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// BINARY (RFC 3516): APPEND of a literal8 holding NUL is stored as given and comes back in literal8;
// BINARY[] decodes quoted-printable as RFC 2045 6.7 says (padding dropped, soft breaks joined).

const QP = [
  'From: a@x.example', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=us-ascii', 'Content-Transfer-Encoding: quoted-printable', '',
  'hello  ', 'bar=', '', 'foo\t=', 'bar', 'foo\t \t= ', '=62', 'foo = \t', 'bar', 'caf=C3=A9', '',
].join('\r\n');

test('APPEND of a literal8 with NUL is stored; BODY[1] and BINARY[1] return it in literal8', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  const body = Buffer.from([0x20, 0x2d, 0x00, 0xff, 0x0d, 0x0a]);
  const msg = Buffer.concat([Buffer.from('From: a@x.example\r\nSubject: nul\r\nMIME-Version: 1.0\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n'), body]);
  t.regex(await appendRaw(c, 'a', 'INBOX', msg, { binary: true }), /^a OK \[APPENDUID \d+ \d+\]/);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  const reply = await c.cmd('f', 'FETCH 1 (BODY.PEEK[1] BINARY.SIZE[1] BINARY.PEEK[1])');
  t.regex(reply, /BODY\[1\] ~\{6\}\r\n/, 'a section with NUL goes as literal8');
  t.is(fetchedValue(reply, 'BODY[1]'), body.toString('latin1'));
  t.regex(reply, /BINARY\.SIZE\[1\] 6/);
  t.is(fetchedValue(reply, 'BINARY[1]'), body.toString('latin1'));
  t.regex(await c.cmd('e', 'FETCH 1 ENVELOPE'), /ENVELOPE \(NIL "nul"/, 'its header fields are read as usual');
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
