import test from 'ava';
import { imapClient } from '../helpers/imap.js';
import { waitForEmails } from '../helpers/emails.js';
import { PASSWORD, rawMessage, submissionApp, submit } from './world.js';

test('hosted recipients and the Sent copy from one submission: delivered copies carry Return-Path and Received and no checks, the Sent copy is the message as written, mail to oneself lands in INBOX and Sent', async (t) => {
  const { app, box } = await submissionApp(t, { count: 2 });
  const [sender, friend] = box.mailboxes;
  const raw = rawMessage({ from: sender.address, to: friend.address, subject: 'one record', body: 'Parsed once, kept three times.' });
  const r = await submit(app, 'implicit', sender.address, { from: sender.address, to: [friend.address, sender.address] }, raw);
  t.true(r.ok, JSON.stringify(r));

  const [arrived] = await waitForEmails(app, box.key, 1, `&mailbox_id=${friend.id}`);
  const delivered = (await app.get(`/v1/emails/${arrived.id}`, box.key)).body.data;
  t.is(delivered.subject, 'one record');
  t.truthy(delivered.headers['received'], 'the delivered copy has our Received:');
  t.truthy(delivered.headers['return-path'], 'and the Return-Path:');
  t.is(delivered.headers['dkim-signature'], undefined, 'mail that stays here is not signed');
  t.deepEqual(delivered.auth, { spf: null, dkim: null, dmarc: null }, 'no SPF/DKIM/DMARC checks of an authenticated submission');

  const own = await waitForEmails(app, box.key, 1, `&mailbox_id=${sender.id}`);
  t.is(own.length, 1, 'mail to oneself: one copy in INBOX');
  const sent = await waitForEmails(app, box.key, 1, `&mailbox_id=${sender.id}&folder=Sent`);
  t.is(sent.length, 1, 'and one in Sent');
  t.true(sent[0].is_read);
  const kept = (await app.get(`/v1/emails/${sent[0].id}`, box.key)).body.data;
  t.is(kept.size, Buffer.byteLength(raw), 'the Sent copy counts the bytes as written');
  t.is(kept.headers['received'], undefined, 'the Sent copy has no Received:');
  t.is(kept.headers['return-path'], undefined, 'nor Return-Path:');
  t.is(kept.subject, 'one record');
  t.is(kept.body_text?.trim(), 'Parsed once, kept three times.');

  const imap = await imapClient(t, app.imapPort, sender.address, PASSWORD);
  const lock = await imap.getMailboxLock('Sent');
  try {
    const messages = [];
    for await (const msg of imap.fetch('1:*', { source: true, size: true, envelope: true })) messages.push(msg);
    t.is(messages.length, 1);
    t.is(messages[0].source!.toString('latin1'), raw, 'over IMAP the Sent copy is byte for byte what the client sent');
    t.is(messages[0].size, Buffer.byteLength(raw), 'RFC822.SIZE of those bytes');
    t.is(messages[0].envelope?.subject, 'one record');
  } finally {
    lock.release();
  }
});
