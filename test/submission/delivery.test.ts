import test from 'ava';
import { authenticate } from 'mailauth';
import { simpleParser } from 'mailparser';
import { imapClient } from '../helpers/imap.js';
import { mailboxRow } from '../helpers/mailboxes.js';
import { deliveriesSettled, PRIVATE_HOOKS, subscribeAll, waitFor } from '../helpers/webhooks.js';
import { waitForEmails } from '../helpers/emails.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, startWorld, waitForItems } from '../outbound/world.js';
import { PASSWORD, submit } from './world.js';

const SENDER = `sender@${ALIAS_DOMAIN}`;
const FRIEND = `friend@${ALIAS_DOMAIN}`;
const DEST = `dest@${REMOTE_DOMAIN}`;

test('one submission: the external copy leaves through the queue with one DKIM signature that verifies, the hosted one arrives with email.received, the Sent copy is read and silent', async (t) => {
  const { app, key, sink, zone } = await startWorld(t, { mailboxes: ['sender', 'friend'], aliases: {}, env: PRIVATE_HOOKS });
  const hooks = await subscribeAll(t, app, key);
  // No Message-ID and no Date: the server adds both.
  const raw = `From: Sender <${SENDER}>\r\nTo: <${DEST}>, <${FRIEND}>\r\nSubject: hello both\r\n\r\nOne message, two ways.\r\n`;
  for (const port of ['starttls'] as const) {
    const r = await submit(app, port, SENDER, { from: SENDER, to: [DEST, FRIEND] }, raw);
    t.true(r.ok, JSON.stringify(r));
  }

  const m = await sink.nth(1);
  t.is(m.from, SENDER);
  t.deepEqual(m.to, [DEST]);
  const text = m.raw.toString('latin1');
  t.is(text.match(/^DKIM-Signature:/gim)?.length, 1, 'exactly one signature');
  t.regex(text, /^DKIM-Signature:[^]*?\bd=alias\.test;/im);
  t.regex(text, /^DKIM-Signature:[^]*?\bs=mailstead;/im);
  const parsed = await simpleParser(m.raw);
  t.regex(parsed.messageId ?? '', /@alias\.test>$/, 'Message-ID added at the From domain');
  t.true(parsed.date instanceof Date && !Number.isNaN(parsed.date.getTime()), 'Date added');
  t.is(parsed.text?.trim(), 'One message, two ways.');
  const resolver = zone.resolver();
  const verdict = await authenticate(m.raw, {
    ip: '127.0.0.1', helo: 'mx.mailstead.test', sender: m.from, mta: 'mx.remote.test',
    resolver: (name: string, rrtype: string) => resolver.resolve(name, rrtype) as Promise<any>,
  });
  const ours = verdict.dkim.results.find((x: any) => x.signingDomain === ALIAS_DOMAIN);
  t.is(ours?.status.result, 'pass', JSON.stringify(verdict.dkim.results));

  const [item] = await waitForItems(app, key, (items) => items.length === 1 && items[0].status === 'sent' && items[0].email_id !== null, 'the submission item sent, pointing at the stored Sent copy');
  t.like(item, { kind: 'submission', mail_from: SENDER, rcpt_to: DEST, status: 'sent' });
  const copy = await app.get(`/v1/emails/${item.email_id}`, key);
  t.is(copy.status, 200, 'email_id names the Sent copy');
  t.is(copy.body.data.folder, 'Sent');

  const friend = (await mailboxRow(app, FRIEND))!;
  const sender = (await mailboxRow(app, SENDER))!;
  const [arrived] = await waitForEmails(app, key, 1, `&mailbox_id=${friend.id}`);
  t.is(arrived.subject, 'hello both');
  const full = await app.get(`/v1/emails/${arrived.id}`, key);
  t.is(full.body.data.message_id, parsed.messageId, JSON.stringify(full.body));
  await waitFor(() => hooks.requests.find((r) => r.body.event === 'email.received' && r.body.data.mailbox_id === friend.id), 'email.received for the hosted recipient');

  const imap = await imapClient(t, app.imapPort, SENDER, PASSWORD);
  const lock = await imap.getMailboxLock('Sent');
  try {
    const messages = [];
    for await (const msg of imap.fetch('1:*', { flags: true, source: true, envelope: true })) messages.push(msg);
    t.is(messages.length, 1, 'one copy in Sent');
    t.true(messages[0].flags?.has('\\Seen'), 'read');
    t.is(messages[0].envelope?.messageId, parsed.messageId);
    t.notRegex(messages[0].source!.toString('latin1'), /^DKIM-Signature:/im, 'the Sent copy is the message as written');
  } finally {
    lock.release();
  }
  const inbox = await app.get(`/v1/emails?mailbox_id=${sender.id}`, key);
  t.is(inbox.body.data.length, 0, 'nothing in the sender\'s INBOX');
  // An event would be a delivery row written with the stored copy: once the queue is idle, every request it made has arrived.
  await deliveriesSettled(app);
  t.false(hooks.requests.some((r) => r.body.data?.mailbox_id === sender.id), 'no event for the Sent copy');
});
