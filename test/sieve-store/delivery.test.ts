import test from 'ava';
import { ImapFlow } from 'imapflow';
import { capturedLogger } from '../helpers/logs.js';
import { sendMail } from '../helpers/smtp.js';
import { inboundBody, waitForEmails } from '../helpers/emails.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld } from '../outbound/world.js';

const BOX = `ann@${ALIAS_DOMAIN}`;
const SENDER = `bob@${REMOTE_DOMAIN}`;

const SCRIPT = `require ["fileinto", "imap4flags", "mailbox", "envelope", "subaddress", "copy"];
if header :contains "subject" "report" { fileinto :create :flags "\\\\Flagged" "Reports"; stop; }
if header :contains "subject" "noise" { discard; stop; }
if envelope :detail "to" "news" { fileinto :create "News"; stop; }
if header :contains "subject" "missing" { fileinto "Nowhere"; stop; }
if header :contains "subject" "read" { addflag "\\\\Seen"; }
if header :contains "subject" "both" { fileinto :copy :flags "\\\\Flagged" "Reports"; }
`;

async function withScript(t: any, script = SCRIPT) {
  // Warnings and errors are kept, so a failing assertion can show what the server said (a script error keeps mail in INBOX).
  const logs = capturedLogger('warn');
  const world = { ...(await startWorld(t, { mailboxes: ['ann'], aliases: {}, logger: logs.logger })), logs };
  const r = await world.app.request('PUT', `/v1/mailboxes/${encodeURIComponent(BOX)}/sieve/main`, { key: world.key, body: { script, active: true } });
  if (r.status !== 200) throw new Error(`PUT script: ${r.status} ${JSON.stringify(r.body)}`);
  return world;
}

const send = (port: number, to: string, subject: string, from = SENDER) => sendMail(port, { from, to: [to] }, message(from, to, subject));

test('SMTP delivery through the active script: fileinto :create with flags, fileinto :copy beside keep, discard, subaddress detail, missing folder to INBOX, \\Seen', async (t) => {
  const { app, key, logs } = await withScript(t);
  await send(app.smtpPort, BOX, 'monthly report');
  await send(app.smtpPort, BOX, 'noise');
  await send(app.smtpPort, `ann+news@${ALIAS_DOMAIN}`, 'newsletter');
  await send(app.smtpPort, BOX, 'missing folder');
  await send(app.smtpPort, BOX, 'already read');
  await send(app.smtpPort, BOX, 'both places');
  await send(app.smtpPort, BOX, 'plain last');

  // INBOX: the missing-folder one, the read one and the last (sent last, stored last: the others are stored by then).
  const inbox = await waitForEmails(app, key, 4);
  t.deepEqual(inbox.map((e: any) => e.subject).sort(), ['already read', 'both places', 'missing folder', 'plain last'], logs.text());
  t.true(inbox.find((e: any) => e.subject === 'already read').is_read);
  t.false(inbox.find((e: any) => e.subject === 'plain last').is_read);
  const reports = (await app.get('/v1/emails?folder=Reports', key)).body.data;
  t.deepEqual(reports.map((e: any) => e.subject).sort(), ['both places', 'monthly report'], logs.text());
  const news = (await app.get('/v1/emails?folder=News', key)).body.data;
  t.deepEqual(news.map((e: any) => [e.subject, e.to_email]), [['newsletter', `ann+news@${ALIAS_DOMAIN}`]]);
  const all = await app.app.db.selectFrom('emails').select('subject').execute();
  t.false(all.some((e) => e.subject === 'noise'), 'discarded');

  // The same over IMAP: the folders exist and the filed copy carries \Flagged.
  const imap = new ImapFlow({ host: '127.0.0.1', port: app.imapPort, secure: true, auth: { user: BOX, pass: 'password-123' }, logger: false, tls: { rejectUnauthorized: false } });
  imap.on('error', () => undefined);
  await imap.connect();
  t.teardown(() => imap.logout().catch(() => imap.close()));
  const names = (await imap.list()).map((f) => f.path);
  t.true(names.includes('Reports') && names.includes('News'));
  const lock = await imap.getMailboxLock('Reports');
  try {
    const msgs = [];
    for await (const m of imap.fetch('1:*', { flags: true, envelope: true })) msgs.push(m);
    t.is(msgs.length, 2);
    t.true(msgs.every((m) => m.flags?.has('\\Flagged') && !m.flags?.has('\\Seen')));
    t.deepEqual(msgs.map((m) => m.envelope?.subject).sort(), ['both places', 'monthly report']);
  } finally {
    lock.release();
  }
});

test('subaddressing at RCPT: local+detail reaches the mailbox, an exact alias wins, an unknown base is refused', async (t) => {
  const world = await startWorld(t, { mailboxes: ['ann', 'carl'], aliases: { [`ann+vip@${ALIAS_DOMAIN}`]: [`carl@${ALIAS_DOMAIN}`] } });
  const { app, key } = world;
  t.is((await send(app.smtpPort, `ann+shop@${ALIAS_DOMAIN}`, 'detail')).accepted.length, 1);
  t.is((await send(app.smtpPort, `ann+vip@${ALIAS_DOMAIN}`, 'exact alias')).accepted.length, 1);
  const err = await send(app.smtpPort, `nobody+x@${ALIAS_DOMAIN}`, 'unknown').catch((e) => e);
  t.regex(String(err?.response ?? err), /550/);
  const mail = await waitForEmails(app, key, 2);
  const byAddr = Object.fromEntries(await Promise.all(mail.map(async (e: any) => [e.subject, (await app.app.db.selectFrom('mailboxes').select('address').where('id', '=', e.mailbox_id).executeTakeFirstOrThrow()).address])));
  t.is(byAddr.detail, BOX);
  t.is(byAddr['exact alias'], `carl@${ALIAS_DOMAIN}`);
  t.is(mail.find((e: any) => e.subject === 'detail').to_email, `ann+shop@${ALIAS_DOMAIN}`);
});

test('redirect leaves through the outbound queue as a forward (SRS sender at the mailbox domain, ARC sealed, DKIM signed); reject sends a refusal to the envelope sender, never to <>', async (t) => {
  const script = `require ["reject", "copy"];
if header :contains "subject" "redirect" { redirect "dest@${REMOTE_DOMAIN}"; }
if header :contains "subject" "copy me" { redirect :copy "dest@${REMOTE_DOMAIN}"; }
if header :contains "subject" "reject" { reject "We do not want this."; }
`;
  const { app, key, sink } = await withScript(t, script);
  await send(app.smtpPort, BOX, 'please redirect');
  const redirected = await sink.nth(1);
  t.deepEqual(redirected.to, [`dest@${REMOTE_DOMAIN}`]);
  t.regex(redirected.from, new RegExp(`^SRS0=.*@${ALIAS_DOMAIN.replace('.', '\\.')}$`, 'i'));
  t.regex(redirected.raw.toString('latin1'), /^DKIM-Signature:/im);
  // Sealed as forwards are (ARC, RFC 8617): the first set of the chain, with the authentication results seen here.
  t.regex(redirected.raw.toString('latin1'), /^ARC-Seal: i=1;/);
  t.regex(redirected.raw.toString('latin1'), /^ARC-Message-Signature: i=1;/m);
  t.regex(redirected.raw.toString('latin1'), /^ARC-Authentication-Results: i=1;/m);
  t.regex(redirected.raw.toString('latin1'), /Subject: please redirect/);

  await send(app.smtpPort, BOX, 'please reject');
  const refusal = await sink.nth(2);
  t.is(refusal.from, '');
  t.deepEqual(refusal.to, [SENDER]);
  const text = refusal.raw.toString('utf8');
  t.regex(text, /^Subject: Rejected: please reject/m);
  t.regex(text, /^Auto-Submitted: auto-replied/m);
  t.regex(Buffer.from(text.split('Content-Transfer-Encoding: base64\r\n\r\n')[1]!.split('\r\n--')[0]!, 'base64').toString('utf8'), /We do not want this\./);
  t.regex(text, /text\/rfc822-headers[\s\S]*Subject: please reject/);

  // A bounce (<>) that the script rejects gets no refusal; a redirect :copy also keeps.
  await sendMail(app.smtpPort, { from: '', to: [BOX] }, message('mailer-daemon@remote.test', BOX, 'reject this bounce'));
  await send(app.smtpPort, BOX, 'copy me');
  const copy = await sink.nth(3);
  t.regex(copy.raw.toString('latin1'), /Subject: copy me/);
  const kept = await waitForEmails(app, key, 1);
  t.deepEqual(kept.map((e: any) => e.subject), ['copy me']);
  const items = await app.app.db.selectFrom('outbound').select(['rcpt_to', 'mail_from']).execute();
  t.is(items.length, 3, JSON.stringify(items));
  t.false(items.some((i) => i.rcpt_to === '' || /mailer-daemon/i.test(i.rcpt_to)));
});

test('POST /v1/mail/inbound mail runs the script too', async (t) => {
  const { app, key } = await withScript(t);
  const r = await app.post('/v1/mail/inbound', key, inboundBody(BOX, { from_email: SENDER, subject: 'api report' }));
  t.is(r.status, 200, JSON.stringify(r.body));
  const reports = await waitForEmails(app, key, 1, 'folder=Reports');
  t.deepEqual(reports.map((e: any) => e.subject), ['api report']);
});

// Most scripts read only headers, so delivery hands the engine the header section alone; `size`
// still judges the whole message, and a script that requires "body" reads the message's body.
const bigMessage = () => message(SENDER, BOX, 'large one').replace(/\r\n\r\n/, `\r\n\r\n${`${'y'.repeat(76)}\r\n`.repeat(400)}`);

test('SMTP delivery: a script without the body test still judges the whole message by size', async (t) => {
  const { app, key } = await withScript(t, 'require ["fileinto", "mailbox"];\nif size :over 20K { fileinto :create "Big"; stop; }\n');
  await sendMail(app.smtpPort, { from: SENDER, to: [BOX] }, bigMessage());
  await send(app.smtpPort, BOX, 'small plain');
  const inbox = await waitForEmails(app, key, 1);
  t.deepEqual(inbox.map((e: any) => e.subject), ['small plain']);
  t.deepEqual((await app.get('/v1/emails?folder=Big', key)).body.data.map((e: any) => e.subject), ['large one']);
});

test('SMTP delivery: a script with the body test reads the body', async (t) => {
  const { app, key } = await withScript(t, 'require ["fileinto", "mailbox", "body"];\nif body :contains "needle-in-the-body" { fileinto :create "Found"; stop; }\n');
  await sendMail(app.smtpPort, { from: SENDER, to: [BOX] }, message(SENDER, BOX, 'with the needle').replace(/\r\n\r\n/, '\r\n\r\nsome text, needle-in-the-body, more text\r\n'));
  await send(app.smtpPort, BOX, 'small plain');
  const inbox = await waitForEmails(app, key, 1);
  t.deepEqual(inbox.map((e: any) => e.subject), ['small plain']);
  t.deepEqual((await app.get('/v1/emails?folder=Found', key)).body.data.map((e: any) => e.subject), ['with the needle']);
});
