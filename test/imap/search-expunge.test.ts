import test from 'ava';
import { pendingExpunge } from '../helpers/imap.js';

// imaptest's stress: a SEARCH answered while another session's EXPUNGE is not yet announced must
// either still count the message or say [EXPUNGEISSUED] (RFC 9051 7.1), never leave it out silently.
test('SEARCH with an expunge by another session pending lists every told message or answers [EXPUNGEISSUED]', async (t) => {
  const { a } = await pendingExpunge(t, 2);
  const found = await a.cmd('q', 'SEARCH 1:3');
  t.notRegex(found, /\* \d+ EXPUNGE/, 'a non-UID SEARCH announces no expunge');
  if (!/^\* SEARCH 1 2 3\r\n/m.test(found)) t.regex(found, /^q OK \[EXPUNGEISSUED\]/m);
  t.regex(await a.cmd('n', 'NOOP'), /\* 2 EXPUNGE/);
  t.regex(await a.cmd('r', 'SEARCH 1:*'), /^\* SEARCH 1 2\r\nr OK SEARCH completed/m);
});

// A message expunged elsewhere is gone, even while its number stands: NOT must not turn "unknown" into a hit.
test('SEARCH NOT with an expunge by another session pending never lists the expunged message', async (t) => {
  const { a } = await pendingExpunge(t, 2);
  const found = await a.cmd('q', 'SEARCH NOT BODY nomatch-anywhere');
  t.regex(found, /^\* SEARCH 1 3\r\n/m);
  t.regex(found, /^q OK \[EXPUNGEISSUED\]/m);
  t.regex(await a.cmd('u', 'UID SEARCH NOT BODY nomatch-anywhere'), /^\* SEARCH 1 3\r\n/m);
});
