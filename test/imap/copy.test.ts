import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp, PASSWORD, pendingExpunge, rawImap } from '../helpers/imap.js';

test('COPY makes a new email in the target folder (COPYUID); a missing target is NO [TRYCREATE]', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'first' });
  await deliver(app, box.key, box.address, { subject: 'second' });
  const items = await waitForEmails(app, box.key, 2);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('b', 'CREATE Archive');
  await c.cmd('c', 'SELECT INBOX');
  const copied = await c.cmd('d', 'COPY 1 Archive');
  t.regex(copied, /^d OK \[COPYUID \d+ 1 1\] COPY completed/m);
  const archive = await waitForEmails(app, box.key, 1, 'folder=Archive');
  t.is(archive[0].subject, items[1].subject);
  t.not(archive[0].id, items[1].id, 'a copy is a new email');
  t.regex(await c.cmd('e', 'COPY 1 Nowhere'), /^e NO \[TRYCREATE\]/m);
});

// imaptest's search-and-copy stress: a COPY by sequence number while another connection's EXPUNGE
// is not yet announced names messages as this client knows them; announcing the expunge first would
// shift the numbers, and the last message's number would be answered BAD "no such message".
test('COPY and MOVE by sequence number with an expunge by another session pending act on the messages the client numbered', async (t) => {
  const { a } = await pendingExpunge(t, 1, async (c) => { t.regex(await c.cmd('c', 'CREATE Kept'), /^c OK/m); });

  // Message 3 is still a3 for session a: the copy takes it, and no EXPUNGE comes before the answer.
  const copied = await a.cmd('k', 'COPY 3 Kept');
  t.regex(copied, /^k OK \[COPYUID \d+ 3 1\]/m);
  t.notRegex(copied, /\* \d+ EXPUNGE/);
  const moved = await a.cmd('m', 'MOVE 3 Kept');
  t.regex(moved, /\[COPYUID \d+ 3 2\]/);
  t.regex(moved, /^\* 3 EXPUNGE\r\n/m, 'the moved message leaves under the number the client gave it');
  t.regex(moved, /^m OK/m);
  t.regex(await a.cmd('n', 'NOOP'), /\* 1 EXPUNGE/);
  t.regex(await a.cmd('x', 'EXAMINE Kept'), /\* 2 EXISTS/);
  t.regex(await a.cmd('f', 'FETCH 1:2 (BODY.PEEK[HEADER.FIELDS (SUBJECT)])'), /Subject: a3[\s\S]*Subject: a3/);
});
