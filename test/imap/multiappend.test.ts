import test from 'ava';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// MULTIAPPEND (RFC 3502): one APPEND, several messages, each with its own flags and date.

test('MULTIAPPEND stores every message in order with its flags and date; APPENDUID names them all', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('cap', 'CAPABILITY'), /MULTIAPPEND/);
  const m1 = 'From: a@x.example\r\nSubject: mail1\r\n\r\nbody1\r\n';
  const m2 = 'From: a@x.example\r\nSubject: mail2\r\n\r\nbody2\r\n';
  const from = c.text().length;
  // The second literal synchronising: the server asks for it with "+".
  c.send(`a APPEND INBOX (\\Flagged) {${m1.length}+}\r\n${m1} (\\Seen) "05-Jan-2026 10:00:00 +0000" {${m2.length}}\r\n`);
  await c.until(/^\+/, 15_000, from);
  c.send(`${m2}\r\n`);
  const done = await c.until(/^a (OK|NO|BAD)/, 15_000, from);
  t.regex(done, /^a OK \[APPENDUID \d+ 1:2\]/m);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^\* 2 EXISTS/m);
  const fetched = await c.cmd('f', 'FETCH 1:2 (FLAGS INTERNALDATE BODY.PEEK[HEADER.FIELDS (SUBJECT)])');
  t.regex(fetched, /^\* 1 FETCH \(FLAGS \([^)]*\\Flagged[^)]*\)[^\r]*\r\nSubject: mail1/m);
  t.regex(fetched, /^\* 2 FETCH \(FLAGS \([^)]*\\Seen[^)]*\) INTERNALDATE "05-Jan-2026 10:00:00 \+0000"[^\r]*\r\nSubject: mail2/m);
  t.regex(await c.cmd('b', 'APPEND INBOX'), /^b BAD/m, 'at least one message');
});
