import test from 'ava';
import { imapApp, imapClient, rawImap, PASSWORD } from '../helpers/imap.js';
import { deliver, waitForEmails } from '../helpers/emails.js';

test('imapflow logs in over IMAPS, lists the special-use folders and fetches delivered mail', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'Over IMAP', body_text: 'Hello from the API' });
  await waitForEmails(app, box.key, 1);
  const client = await imapClient(t, imapPort, box.address.toUpperCase());
  const list = await client.list();
  const uses = Object.fromEntries(list.map((f) => [f.path, f.specialUse ?? null]));
  t.deepEqual(uses, { INBOX: '\\Inbox', Sent: '\\Sent', Drafts: '\\Drafts', Trash: '\\Trash', Junk: '\\Junk' });
  const lock = await client.getMailboxLock('INBOX');
  try {
    const msgs = [];
    for await (const m of client.fetch('1:*', { uid: true, envelope: true, flags: true, size: true, source: true, bodyStructure: true, internalDate: true })) msgs.push(m);
    t.is(msgs.length, 1);
    t.is(msgs[0].envelope?.subject, 'Over IMAP');
    t.is(msgs[0].uid, 1);
    t.is(msgs[0].size, msgs[0].source?.length);
    t.true(msgs[0].source!.toString().includes('Hello from the API'));
    t.deepEqual([...(msgs[0].flags ?? [])], []);
    t.is(msgs[0].bodyStructure?.type, 'text/plain');
  } finally {
    lock.release();
  }
});

test('raw exchange: capabilities, LOGIN, bad commands and unauthenticated commands get clear answers', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('a1', 'CAPABILITY'), /\* CAPABILITY IMAP4rev2 IMAP4rev1 .*AUTH=PLAIN/);
  t.regex(await c.cmd('a2', 'SELECT INBOX'), /^a2 BAD log in first/m);
  t.regex(await c.cmd('a3', 'FROBNICATE'), /^a3 BAD unknown command/m);
  t.regex(await c.cmd('a4', 'LOGIN "unterminated'), /^a4 BAD/m);
  t.regex(await c.cmd('a5', `LOGIN ${box.address} wrong-password`), /^a5 NO \[AUTHENTICATIONFAILED\]/m);
  t.regex(await c.cmd('a6', `LOGIN ${box.address} ${PASSWORD}`), /^a6 OK \[CAPABILITY /m);
  const sel = await c.cmd('a7', 'SELECT INBOX');
  t.regex(sel, /\* 0 EXISTS/);
  t.regex(sel, /\* OK \[UIDVALIDITY \d+\]/);
  t.regex(sel, /^a7 OK \[READ-WRITE\]/m);
  t.regex(await c.cmd('a8', 'LOGOUT'), /\* BYE/);
});
