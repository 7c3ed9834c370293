import test from 'ava';
import { imapApp, imapClient, PASSWORD, rawImap } from '../helpers/imap.js';
import { deliver, waitForEmails } from '../helpers/emails.js';

test('LIST shows SPECIAL-USE attributes; LIST (SPECIAL-USE), LSUB, NAMESPACE and STATUS answer as the RFCs say', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address);
  await waitForEmails(app, box.key, 1);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  const list = await c.cmd('b', 'LIST "" "*"');
  t.regex(list, /\* LIST \(\\HasNoChildren\) "\/" INBOX/);
  for (const [name, use] of [['Sent', 'Sent'], ['Drafts', 'Drafts'], ['Trash', 'Trash'], ['Junk', 'Junk']]) {
    t.regex(list, new RegExp(`\\* LIST \\(\\\\HasNoChildren \\\\${use}\\) "/" ${name}`));
  }
  const special = await c.cmd('c', 'LIST (SPECIAL-USE) "" "*"');
  t.notRegex(special, /INBOX/);
  t.regex(special, /\\Sent\) "\/" Sent/);
  t.regex(await c.cmd('d', 'LIST "" ""'), /\* LIST \(\\Noselect\) "\/" ""/);
  t.regex(await c.cmd('e', 'NAMESPACE'), /\* NAMESPACE \(\("" "\/"\)\) NIL NIL/);
  const status = await c.cmd('f', 'STATUS inbox (MESSAGES UNSEEN UIDNEXT UIDVALIDITY SIZE)');
  t.regex(status, /\* STATUS INBOX \(MESSAGES 1 UNSEEN 1 UIDNEXT 2 UIDVALIDITY \d+ SIZE \d+\)/);
  t.regex(await c.cmd('g', 'STATUS Nowhere (MESSAGES)'), /^g NO \[NONEXISTENT\]/m);
  t.regex(await c.cmd('h', 'STATUS INBOX (BOGUS)'), /^h BAD/m);
  const withStatus = await c.cmd('i', 'LIST "" "%" RETURN (SPECIAL-USE STATUS (MESSAGES))');
  t.regex(withStatus, /\* STATUS INBOX \(MESSAGES 1\)/);
  t.regex(await c.cmd('j', 'LSUB "" "*"'), /\* LSUB \(\\HasNoChildren\) "\/" Sent/);
});

test('CREATE, RENAME, SUBSCRIBE and DELETE of user folders; the standard folders stay; UIDVALIDITY is new for a folder made again', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  t.regex(await c.cmd('b', 'CREATE Projects/2026'), /^b OK/m);
  const list = await c.cmd('c', 'LIST "" "Projects*"');
  t.regex(list, /\* LIST \(\\HasChildren\) "\/" Projects/);
  t.regex(list, /\* LIST \(\\HasNoChildren\) "\/" Projects\/2026/);
  t.regex(await c.cmd('d', 'CREATE Projects'), /^d NO \[ALREADYEXISTS\]/m);
  t.regex(await c.cmd('e', 'CREATE INBOX'), /^e NO \[ALREADYEXISTS\]/m);
  t.regex(await c.cmd('f', 'CREATE "bad*name"'), /^f NO \[CANNOT\]/m);
  t.regex(await c.cmd('g', 'DELETE Sent'), /^g NO \[CANNOT\]/m);
  t.regex(await c.cmd('h', 'RENAME INBOX Other'), /^h NO \[CANNOT\]/m);
  t.regex(await c.cmd('i', 'DELETE Projects'), /^i NO \[INUSE\]/m);
  const before = /UIDVALIDITY (\d+)/.exec(await c.cmd('j', 'STATUS Projects/2026 (UIDVALIDITY)'))![1];
  t.regex(await c.cmd('k', 'RENAME Projects Work'), /^k OK/m);
  const renamed = await c.cmd('l', 'LIST "" "*"');
  t.regex(renamed, /"\/" Work\/2026/);
  t.notRegex(renamed, /Projects/);
  t.is(/UIDVALIDITY (\d+)/.exec(await c.cmd('m', 'STATUS Work/2026 (UIDVALIDITY)'))![1], before, 'a rename keeps UIDVALIDITY');
  t.regex(await c.cmd('n', 'UNSUBSCRIBE Work/2026'), /^n OK/m);
  t.notRegex(await c.cmd('o', 'LSUB "" "*"'), /Work\/2026/);
  t.regex(await c.cmd('p', 'DELETE Work/2026'), /^p OK/m);
  t.regex(await c.cmd('q', 'CREATE Work/2026'), /^q OK/m);
  const again = /UIDVALIDITY (\d+)/.exec(await c.cmd('r', 'STATUS Work/2026 (UIDVALIDITY)'))![1];
  t.not(again, before, 'a folder made again gets a new UIDVALIDITY');
});

test('imapflow sees the folder tree and special uses', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const client = await imapClient(t, imapPort, box.address);
  await client.mailboxCreate('Archive');
  const tree = await client.list();
  t.truthy(tree.find((f) => f.path === 'Archive'));
  t.is(tree.find((f) => f.path === 'Trash')?.specialUse, '\\Trash');
  const st = await client.status('INBOX', { messages: true, uidNext: true });
  t.is(st.messages, 0);
});
