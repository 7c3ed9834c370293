import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { sendMail } from '../helpers/smtp.js';
import { waitForEmails } from '../helpers/emails.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, outboundEnv, startWorld } from '../outbound/world.js';

const BOX = `ann@${ALIAS_DOMAIN}`;
const vacationUrl = `/v1/mailboxes/${encodeURIComponent(BOX)}/vacation`;

/** A message to the mailbox with the header fields given in front. */
function mail(from: string, subject: string, head = '', to = BOX): string {
  return `${head}From: <${from}>\r\nTo: <${to}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}.${Date.now()}@origin.test>\r\nReferences: <earlier@origin.test>\r\nDate: Thu, 26 Nov 2026 04:00:00 +0000\r\n\r\nHello.\r\n`;
}

/** Outbound items addressed to `rcpt` (the replies queued for a sender). */
const repliesTo = async (app: any, rcpt: string) =>
  (await app.app.db.selectFrom('outbound').select(['rcpt_to', 'mail_from', 'kind']).where('rcpt_to', '=', rcpt).execute()).length;

test('the REST vacation reply: envelope <>, Auto-Submitted, In-Reply-To/References, "Auto: <subject>", once per sender per period', async (t) => {
  const { app, key, sink } = await startWorld(t, { mailboxes: ['ann'], aliases: {} });
  t.is((await app.request('PUT', vacationUrl, { key, body: { enabled: true, body: 'I am away until December.', days: 3 } })).status, 200);
  const bob = `bob@${REMOTE_DOMAIN}`;
  const first = mail(bob, 'project status');
  await sendMail(app.smtpPort, { from: bob, to: [BOX] }, first);
  const reply = await sink.nth(1);
  t.is(reply.from, '');
  t.deepEqual(reply.to, [bob]);
  const text = reply.raw.toString('utf8');
  t.regex(text, /^Auto-Submitted: auto-replied\r$/m);
  t.regex(text, /^Subject: Auto: project status\r$/m);
  const id = /Message-ID: (<[^>]+>)/.exec(first)![1]!;
  t.true(text.includes(`In-Reply-To: ${id}`));
  t.true(text.includes(`References: <earlier@origin.test> ${id}`));
  t.regex(text, new RegExp(`^From: <${BOX}>\\r$`, 'm'));
  t.is(Buffer.from(text.split('\r\n\r\n')[1]!.replace(/\s/g, ''), 'base64').toString('utf8'), 'I am away until December.');

  // A second message from bob within the period gets no reply; carol's (sent after it) does.
  await sendMail(app.smtpPort, { from: bob, to: [BOX] }, mail(bob, 'again'));
  const carol = `carol@${REMOTE_DOMAIN}`;
  await sendMail(app.smtpPort, { from: carol, to: [BOX] }, mail(carol, 'hello'));
  await waitForEmails(app, key, 3);
  t.is(await repliesTo(app, bob), 1);
  t.is(await repliesTo(app, carol), 1);
});

test('no vacation reply to lists, bulk, auto-submitted mail, <>, MAILER-DAEMON, owner-/-request senders, or mail not addressed to the mailbox', async (t) => {
  const { app, key } = await startWorld(t, { mailboxes: ['ann'], aliases: {} });
  t.is((await app.request('PUT', vacationUrl, { key, body: { enabled: true, body: 'away' } })).status, 200);
  const r = REMOTE_DOMAIN;
  const cases: Array<[string | null, string, string, string?]> = [
    [`list@${r}`, 'list', 'List-Id: <news.remote.test>\r\n'],
    [`unsub@${r}`, 'unsubscribe', 'List-Unsubscribe: <mailto:u@remote.test>\r\n'],
    [`bulk@${r}`, 'bulk', 'Precedence: bulk\r\n'],
    [`junkprec@${r}`, 'junk precedence', 'Precedence: junk\r\n'],
    [`auto@${r}`, 'auto', 'Auto-Submitted: auto-generated\r\n'],
    [null, 'null sender', ''],
    [`MAILER-DAEMON@${r}`, 'daemon', ''],
    [`owner-news@${r}`, 'owner', ''],
    [`news-request@${r}`, 'request', ''],
    [`bcc@${r}`, 'bcc', '', `someone@${r}`],
  ];
  for (const [from, subject, head, to] of cases) {
    await sendMail(app.smtpPort, { from: from ?? '', to: [BOX] }, mail(from ?? `x@${r}`, subject, head, to));
  }
  // A control message that is answered, sent last: once it is stored, every case before it is too.
  const ok = `fine@${r}`;
  await sendMail(app.smtpPort, { from: ok, to: [BOX] }, mail(ok, 'control', 'Auto-Submitted: no\r\n'));
  await waitForEmails(app, key, cases.length + 1);
  const items = await app.app.db.selectFrom('outbound').select('rcpt_to').execute();
  t.deepEqual(items.map((i) => i.rcpt_to), [ok]);
});

test('once per sender per period across a restart; a Sieve vacation action with :days answers too, and a script that keeps elsewhere gets no REST reply', async (t) => {
  const world = await startWorld(t, { mailboxes: ['ann'], aliases: {} });
  const { app, key, zone, sink } = world;
  t.is((await app.request('PUT', vacationUrl, { key, body: { enabled: true, body: 'away' } })).status, 200);
  const bob = `bob@${REMOTE_DOMAIN}`;
  await sendMail(app.smtpPort, { from: bob, to: [BOX] }, mail(bob, 'before restart'));
  await sink.nth(1);
  const dataDir = app.dataDir;
  await app.stop();

  const again = await startTestApp(t, { dataDir, env: { ...outboundEnv(zone, sink.port), MAILSTEAD_LOG_LEVEL: process.env.SIEVE_LOG ?? 'silent' }, outboundTesting: { timeoutMs: 10_000, pollMs: 100 } });
  await sendMail(again.smtpPort, { from: bob, to: [BOX] }, mail(bob, 'after restart'));
  // A script whose vacation has its own handle answers bob once more; mail it files away gets no REST reply.
  const script = 'require ["vacation", "fileinto", "mailbox"];\nif header :contains "subject" "filed" { fileinto :create "Elsewhere"; stop; }\nvacation :days 2 :subject "Out" "Scripted away";\n';
  t.is((await again.request('PUT', `/v1/mailboxes/${encodeURIComponent(BOX)}/sieve/v`, { key, body: { script, active: true } })).status, 200);
  const carol = `carol@${REMOTE_DOMAIN}`;
  await sendMail(again.smtpPort, { from: carol, to: [BOX] }, mail(carol, 'filed away'));
  await sendMail(again.smtpPort, { from: bob, to: [BOX] }, mail(bob, 'scripted'));
  const scripted = await sink.nth(2);
  t.deepEqual(scripted.to, [bob]);
  t.regex(scripted.raw.toString('utf8'), /^Subject: Out\r$/m);
  await sendMail(again.smtpPort, { from: bob, to: [BOX] }, mail(bob, 'scripted twice'));
  await waitForEmails(again, key, 4); // before and after restart, scripted, scripted twice (INBOX); the filed one is elsewhere
  t.is(await repliesTo(again, bob), 2, 'the first reply before the restart, the script\'s once');
  t.is(await repliesTo(again, carol), 0);
});
