import test from 'ava';
import { inboundBody, waitForEmails } from '../helpers/emails.js';
import { mailboxRow } from '../helpers/mailboxes.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, startWorld, waitForItems } from '../outbound/world.js';

// DECISIONS.md section 18: mail delivered over SMTP or POST /v1/mail/inbound gets a verdict; Sent
// copies, mail an owner sends (submission, POST /v1/mail/send: section 13's "same path") and DSNs
// we make do not.
const SENDER = `sender@${ALIAS_DOMAIN}`;
const FRIEND = `friend@${ALIAS_DOMAIN}`;
const DEST = `dest@${REMOTE_DOMAIN}`;

test('POST /v1/mail/send to a hosted mailbox: the delivered copy and the Sent copy get no verdict; inbound API mail does', async (t) => {
  const { app, key } = await startWorld(t, { mailboxes: ['sender', 'friend'], aliases: {} });
  const sent = await app.post('/v1/mail/send', key, { from: SENDER, to: [FRIEND], subject: 'lunch', text: 'at noon?' });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  const friend = (await mailboxRow(app, FRIEND))!;
  const sender = (await mailboxRow(app, SENDER))!;
  const [arrived] = await waitForEmails(app, key, 1, `&mailbox_id=${friend.id}`);
  const [filed] = await waitForEmails(app, key, 1, `&mailbox_id=${sender.id}&folder=Sent`);
  for (const e of [arrived, filed]) {
    const full = (await app.get(`/v1/emails/${e.id}`, key)).body.data;
    t.is(full.spam, null, `${e.folder} copy is not classified`);
    t.is(full.headers['x-spam-status'], undefined);
  }
  // The same mailbox does classify mail that arrives from outside.
  t.is((await app.post('/v1/mail/inbound', key, inboundBody(FRIEND, { subject: 'from outside' }))).status, 200);
  const both = await waitForEmails(app, key, 2, `&mailbox_id=${friend.id}`);
  const outside = both.find((e) => e.subject === 'from outside');
  t.like((await app.get(`/v1/emails/${outside.id}`, key)).body.data.spam, { verdict: 'ham', filter: 'builtin' });
});

test('a DSN we make for a hosted sender is delivered without a verdict', async (t) => {
  const { app, key } = await startWorld(t, { mailboxes: ['sender'], aliases: {}, answer: (rcpt) => (rcpt === DEST ? '550 5.1.1 no such user here' : null) });
  t.is((await app.post('/v1/mail/send', key, { from: SENDER, to: [DEST], subject: 'to nobody', text: 'hello' })).status, 200);
  await waitForItems(app, key, (all) => all.some((i) => i.kind === 'dsn' && i.status === 'sent'), 'the DSN delivered');
  const sender = (await mailboxRow(app, SENDER))!;
  const [dsn] = await waitForEmails(app, key, 1, `&mailbox_id=${sender.id}&folder=INBOX`);
  t.is(dsn.subject, 'Undelivered Mail Returned to Sender');
  const full = (await app.get(`/v1/emails/${dsn.id}`, key)).body.data;
  t.is(full.spam, null);
  t.is(full.headers['x-spam-status'], undefined);
});
