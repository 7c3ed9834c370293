import test from 'ava';
import { imapApp, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';

// Section numbers inside message/rfc822 parts (RFC 3501/9051 6.4.5): a message that is not multipart
// has one part, its body; part numbers after a message/rfc822 part count the parts of the message inside.

const INNER = 'From: sub@domain.org\r\nSubject: submsg\r\n\r\nHello world\r\n';
const ATTACHED = `From: user@domain.org\r\nMime-Version: 1.0\r\nContent-Type: message/rfc822\r\n\r\n${INNER}`;
const NESTED_INNER = 'From: in@x.example\r\nContent-Type: multipart/mixed; boundary="b2"\r\n\r\n--b2\r\nContent-Type: text/plain\r\n\r\nfirst\r\n--b2\r\nContent-Type: text/html\r\n\r\n<p>second</p>\r\n--b2--\r\n';
const NESTED = `From: out@x.example\r\nContent-Type: multipart/mixed; boundary="b1"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nbody\r\n--b1\r\nContent-Type: message/rfc822\r\n\r\n${NESTED_INNER}\r\n--b1--\r\n`;

async function append(c: RawImap, tag: string, msg: string): Promise<void> {
  const from = c.text().length;
  c.send(`${tag} APPEND INBOX {${Buffer.byteLength(msg)}+}\r\n${msg}\r\n`);
  await c.until(new RegExp(`^${tag} OK`), 15_000, from);
}

/** The literal of a one-section FETCH answer. */
async function section(c: RawImap, tag: string, seq: number, name: string): Promise<string> {
  const reply = await c.cmd(tag, `FETCH ${seq} (BODY.PEEK[${name}])`);
  const m = /\{(\d+)\}\r\n/.exec(reply);
  if (!m) return /BODY\[[^\]]*\] "([^"]*)"/.exec(reply)?.[1] ?? `no section in ${reply}`;
  const at = reply.indexOf(m[0]) + m[0].length;
  return Buffer.from(reply.slice(at), 'latin1').subarray(0, Number(m[1])).toString('latin1');
}

test('BODY[1] of an attached email is the whole embedded message; deeper sections follow its parts', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  await append(c, 'a1', ATTACHED);
  await append(c, 'a2', NESTED);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  const n = Number(/\* (\d+) EXISTS/.exec(c.text())![1]);
  const [one, two] = [n - 1, n];

  t.is(await section(c, 'f1', one, '1'), INNER, '[1] is the embedded message, header and body');
  t.is(await section(c, 'f2', one, 'TEXT'), INNER);
  t.is(await section(c, 'f3', one, '1.1'), 'Hello world\r\n', '[1.1] is its body');
  t.is(await section(c, 'f4', one, '1.HEADER'), 'From: sub@domain.org\r\nSubject: submsg\r\n\r\n');
  t.is(await section(c, 'f5', one, '1.TEXT'), 'Hello world\r\n');
  t.is(await section(c, 'f6', one, '1.HEADER.FIELDS (SUBJECT)'), 'Subject: submsg\r\n\r\n');

  t.is(await section(c, 'g1', two, '1'), 'body', 'a multipart counts its children');
  t.is(await section(c, 'g2', two, '2'), NESTED_INNER, '[2] is the attached message');
  t.is(await section(c, 'g3', two, '2.1'), 'first', '[2.1] is the first part of the message inside');
  t.is(await section(c, 'g4', two, '2.2'), '<p>second</p>');
  t.is(await section(c, 'g5', two, '2.2.MIME'), 'Content-Type: text/html\r\n\r\n');
  t.is(await section(c, 'g6', two, '2.HEADER.FIELDS (FROM)'), 'From: in@x.example\r\n\r\n');
  t.is(await section(c, 'g7', two, '1.1'), '', 'a leaf has no parts');
});
