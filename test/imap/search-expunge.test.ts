import test from 'ava';
import { appendRaw, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// imaptest's stress: a SEARCH answered while another session's EXPUNGE is not yet announced must
// either still count the message or say [EXPUNGEISSUED] (RFC 9051 7.1), never leave it out silently.
test('SEARCH with an expunge by another session pending lists every told message or answers [EXPUNGEISSUED]', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await rawImap(t, imapPort);
  t.regex(await a.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  for (const tag of ['a1', 'a2', 'a3']) t.regex(await appendRaw(a, tag, 'INBOX', `From: a@x.example\r\nSubject: ${tag}\r\n\r\nbody\r\n`), /^a\d OK/);
  t.regex(await a.cmd('s', 'SELECT INBOX'), /\* 3 EXISTS/);
  const b = await rawImap(t, imapPort);
  t.regex(await b.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  await b.cmd('s', 'SELECT INBOX');
  t.regex(await b.cmd('d', 'STORE 2 +FLAGS (\\Deleted)'), /^d OK/m);
  t.regex(await b.cmd('e', 'EXPUNGE'), /\* 2 EXPUNGE/);
  const found = await a.cmd('q', 'SEARCH 1:3');
  t.notRegex(found, /\* \d+ EXPUNGE/, 'a non-UID SEARCH announces no expunge');
  if (!/^\* SEARCH 1 2 3\r\n/m.test(found)) t.regex(found, /^q OK \[EXPUNGEISSUED\]/m);
  t.regex(await a.cmd('n', 'NOOP'), /\* 2 EXPUNGE/);
  t.regex(await a.cmd('r', 'SEARCH 1:*'), /^\* SEARCH 1 2\r\nr OK SEARCH completed/m);
});
