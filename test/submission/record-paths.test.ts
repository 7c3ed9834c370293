import test from 'ava';
import { imapClient } from '../helpers/imap.js';
import { createAlias } from '../helpers/mailboxes.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, startWorld, waitForItems } from '../outbound/world.js';
import { PASSWORD, submit } from './world.js';

const SENDER = `sender@${ALIAS_DOMAIN}`;

/** The header section of a message as the sink received it. */
const headOf = (raw: Buffer) => raw.toString('latin1').split('\r\n\r\n')[0];

test('external recipients ride in the Sent copy\'s record, and a message too large for its record takes the group commit: both leave signed, both Sent copies are the message as written and named by their items', async (t) => {
  const { app, key, sink } = await startWorld(t, { mailboxes: ['sender'], aliases: {} });
  const small = `From: <${SENDER}>\r\nTo: <small@${REMOTE_DOMAIN}>\r\nSubject: small one\r\nMessage-ID: <small@client.test>\r\n\r\nA short body.\r\n`;
  // Over the 256 KiB a journal record holds inline (ingest's RAW_IN_ROW_BYTES).
  const line = 'y'.repeat(76) + '\r\n';
  const large = `From: <${SENDER}>\r\nTo: <large@${REMOTE_DOMAIN}>\r\nSubject: large one\r\nMessage-ID: <large@client.test>\r\n\r\n${line.repeat(4000)}`;
  for (const [to, raw] of [[`small@${REMOTE_DOMAIN}`, small], [`large@${REMOTE_DOMAIN}`, large]] as const) {
    const r = await submit(app, 'implicit', SENDER, { from: SENDER, to: [to] }, raw);
    t.true(r.ok, JSON.stringify(r).slice(0, 300));
  }
  await sink.nth(2);
  for (const [to, raw] of [[`small@${REMOTE_DOMAIN}`, small], [`large@${REMOTE_DOMAIN}`, large]] as const) {
    const got = sink.messages.filter((m) => m.to[0] === to);
    t.is(got.length, 1, `${to} got one copy`);
    const text = got[0].raw.toString('latin1');
    t.is(headOf(got[0].raw).match(/^DKIM-Signature:/gim)?.length, 1, 'one signature');
    t.true(text.endsWith(raw), `${to} got the message as written after the signature`);
  }
  const items = await waitForItems(app, key, (i) => i.length === 2 && i.every((x) => x.status === 'sent' && x.email_id !== null), 'both items sent, naming their Sent copies');
  const imap = await imapClient(t, app.imapPort, SENDER, PASSWORD);
  const lock = await imap.getMailboxLock('Sent');
  try {
    const sources = new Map<string, string>();
    for await (const msg of imap.fetch('1:*', { source: true, envelope: true })) sources.set(msg.envelope!.messageId!, msg.source!.toString('latin1'));
    t.is(sources.size, 2);
    // As written: with the Date the server added, without the signature; the remote got the signature and then exactly these bytes.
    for (const [id, raw, to] of [['<small@client.test>', small, `small@${REMOTE_DOMAIN}`], ['<large@client.test>', large, `large@${REMOTE_DOMAIN}`]]) {
      const source = sources.get(id) ?? '';
      t.true(source.endsWith(raw), `the Sent copy of ${id} is the message as written`);
      t.notRegex(source, /^DKIM-Signature:/im);
      const sent = sink.messages.find((m) => m.to[0] === to)!.raw.toString('latin1');
      t.true(sent.endsWith(source) && /^DKIM-Signature:/i.test(sent.slice(0, sent.length - source.length)), `${to} got the signature, then the Sent copy's bytes`);
    }
  } finally {
    lock.release();
  }
  for (const item of items) {
    const copy = await app.get(`/v1/emails/${item.email_id}`, key);
    t.is(copy.body.data.folder, 'Sent');
    t.is(copy.body.data.subject, item.rcpt_to.startsWith('small') ? 'small one' : 'large one');
  }
});

test('an alias with no hosted mailbox in its goto sends to external recipients only: no Sent copy, the message still leaves once', async (t) => {
  const { app, key, sink } = await startWorld(t, { mailboxes: ['sender'], aliases: {} });
  const done = await createAlias(app, key, ALIAS_DOMAIN, { address: `outside@${ALIAS_DOMAIN}`, goto: [`far@${REMOTE_DOMAIN}`], sender_allowed: true });
  t.is(done.body.status, 'completed');
  const r = await app.post('/v1/mail/send', key, { from: `outside@${ALIAS_DOMAIN}`, to: [`dest@${REMOTE_DOMAIN}`], subject: 'no sent copy', text: 'hi' });
  t.is(r.status, 200, JSON.stringify(r.body));
  const m = await sink.nth(1);
  t.deepEqual(m.to, [`dest@${REMOTE_DOMAIN}`]);
  t.regex(headOf(m.raw), /^Subject: no sent copy$/m);
  const [item] = await waitForItems(app, key, (i) => i.length === 1 && i[0].status === 'sent', 'the item sent');
  t.is(item.email_id, null, 'no copy to name');
  t.is(sink.messages.length, 1);
});
