import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

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
