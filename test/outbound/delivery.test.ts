import test from 'ava';
import { waitForEmails } from '../helpers/emails.js';
import { sendMail } from '../helpers/smtp.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld, waitForItems } from './world.js';

const SENDER = `ann@${REMOTE_DOMAIN}`;

test('recipients at one domain share a transaction, and later messages reuse the idle session', async (t) => {
  const { app, key, sink } = await startWorld(t, {
    aliases: { [`team@${ALIAS_DOMAIN}`]: [`a@${REMOTE_DOMAIN}`, `b@${REMOTE_DOMAIN}`] },
    testing: { idleMs: 60_000 },
  });
  await sendMail(app.smtpPort, { from: SENDER, to: [`team@${ALIAS_DOMAIN}`] }, message(SENDER, `team@${ALIAS_DOMAIN}`, 'together'));
  const first = await sink.nth(1);
  t.deepEqual([...first.to].sort(), [`a@${REMOTE_DOMAIN}`, `b@${REMOTE_DOMAIN}`]);
  for (const [n, subject] of [[2, 'second'], [3, 'third']] as const) {
    await sendMail(app.smtpPort, { from: SENDER, to: [`team@${ALIAS_DOMAIN}`] }, message(SENDER, `team@${ALIAS_DOMAIN}`, subject));
    await sink.nth(n);
  }
  t.is(sink.messages.length, 3);
  t.is(sink.connections(), 1, 'one session carried all three transactions');
  const items = await waitForItems(app, key, (all) => all.length === 6 && all.every((i) => i.status === 'sent'), 'six items sent');
  t.true(items.every((i) => i.attempts === 1));
});

test('a DSN to a hosted address is delivered locally, into its mailbox', async (t) => {
  const { app, key, sink } = await startWorld(t, { mailboxes: ['keep'], answer: () => '550 5.7.1 not wanted here' });
  const from = `keep@${ALIAS_DOMAIN}`;
  await sendMail(app.smtpPort, { from, to: [`fwd@${ALIAS_DOMAIN}`] }, message(from, `fwd@${ALIAS_DOMAIN}`, 'returned to a local sender'));
  const [dsn] = await waitForEmails(app, key, 1);
  t.is(dsn.from_email.toLowerCase(), 'mailer-daemon@mx.mailstead.test');
  t.is(dsn.to_email, from);
  const items = await waitForItems(app, key, (all) => all.length === 2 && all.every((i) => i.status !== 'queued'), 'forward failed, DSN delivered');
  const report = items.find((i) => i.kind === 'dsn');
  t.like(report, { status: 'sent', rcpt_to: from, last_response: '250 2.0.0 delivered locally' });
  t.is(sink.messages.length, 0);
});
