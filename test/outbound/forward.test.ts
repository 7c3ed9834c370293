import test from 'ava';
import { authenticate } from 'mailauth';
import { sendMail } from '../helpers/smtp.js';
import { withoutReturnPath } from '../../src/smtp/return-path.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld, waitForItems } from './world.js';

const SRS0 = /^SRS0=([A-Za-z0-9+/]{4})=([A-Z2-7]{2})=remote\.test=ann@alias\.test$/i;

test('a forwarded copy: SRS sender at the alias domain, the stored bytes unchanged below an ARC set and a DKIM-Signature that verify', async (t) => {
  const { app, key, sink, zone } = await startWorld(t);
  const raw = message(`ann@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, 'forward me');
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`] }, raw);
  const m = await sink.nth(1);
  t.regex(m.from, SRS0);
  t.deepEqual(m.to, [`dest@${REMOTE_DOMAIN}`]);
  t.true(m.secure, 'STARTTLS was used because the sink offers it');

  // The message as stored (our Return-Path and Received: on top of what was sent), less the
  // Return-Path (a copy in transit carries none: DECISIONS.md section 21), follows the added headers byte for byte.
  const row = await app.app.db.selectFrom('inbound').select('raw').executeTakeFirstOrThrow();
  t.true(Buffer.isBuffer(row.raw) && row.raw.toString('latin1').endsWith(raw));
  t.true(row.raw!.toString('latin1').startsWith(`Return-Path: <ann@${REMOTE_DOMAIN}>\r\nReceived: `));
  const stored = withoutReturnPath(row.raw!);
  t.is(stored.length, row.raw!.length - `Return-Path: <ann@${REMOTE_DOMAIN}>\r\n`.length);
  t.false(/^return-path:/im.test(m.raw.toString('latin1')));
  t.deepEqual(m.raw.subarray(m.raw.length - stored.length), stored);
  const added = m.raw.subarray(0, m.raw.length - stored.length).toString('latin1');
  t.deepEqual(added.split(/\r\n(?![ \t])/).filter(Boolean).map((h) => h.slice(0, h.indexOf(':')).toLowerCase()),
    ['arc-seal', 'arc-message-signature', 'arc-authentication-results', 'dkim-signature']);

  const resolver = zone.resolver();
  const verdict = await authenticate(m.raw, {
    ip: '127.0.0.1', helo: 'mx.mailstead.test', sender: m.from, mta: 'mx.remote.test',
    resolver: (name: string, rrtype: string) => resolver.resolve(name, rrtype) as Promise<any>,
  });
  const ours = verdict.dkim.results.find((r: any) => r.signingDomain === ALIAS_DOMAIN);
  t.is(ours?.status.result, 'pass');
  t.is((verdict.arc as any).status.result, 'pass');
  t.is((verdict.arc as any).i, 1);

  const [item] = await waitForItems(app, key, (items) => items[0]?.status === 'sent', 'the item marked sent');
  t.like(item, { kind: 'forward', email_id: null, mail_from: `ann@${REMOTE_DOMAIN}`, rcpt_to: `dest@${REMOTE_DOMAIN}`, status: 'sent', attempts: 1, next_attempt_at: null });
  t.regex(item.last_response, /^250/);
});

test('a bounce to the SRS address comes back to the original sender with the null sender; a forged one is 550 5.1.1', async (t) => {
  const { app, sink } = await startWorld(t);
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`] }, message(`ann@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, 'will bounce'));
  const srs = (await sink.nth(1)).from;
  const bounce = `From: MAILER-DAEMON@remote.test\r\nTo: <${srs}>\r\nSubject: Undelivered Mail\r\n\r\nsorry\r\n`;
  const res = await sendMail(app.smtpPort, { from: '', to: [srs.toUpperCase()] }, bounce);
  t.is(res.accepted.length, 1);
  const back = await sink.nth(2);
  t.is(back.from, '');
  t.deepEqual(back.to.map((a) => a.toLowerCase()), [`ann@${REMOTE_DOMAIN}`]);
  t.true(back.raw.toString('latin1').endsWith(bounce));

  const [, hash] = SRS0.exec(srs)!;
  const forged = srs.replace(hash, hash === 'AAAA' ? 'BBBB' : 'AAAA');
  const err = await sendMail(app.smtpPort, { from: '', to: [forged] }, bounce).catch((e) => e);
  t.regex(String(err.response ?? err.rejectedErrors?.[0]?.response), /^550 5\.1\.1/);
  const unknown = await sendMail(app.smtpPort, { from: '', to: [`SRS0=abcd=AA=x.test=y@${ALIAS_DOMAIN}`] }, bounce).catch((e) => e);
  t.regex(String(unknown.response ?? unknown.rejectedErrors?.[0]?.response), /^550 5\.1\.1/);
});

test('mail from the null sender is forwarded with the null sender', async (t) => {
  const { app, sink } = await startWorld(t);
  await sendMail(app.smtpPort, { from: '', to: [`fwd@${ALIAS_DOMAIN}`] }, message(`daemon@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, 'null sender'));
  const m = await sink.nth(1);
  t.is(m.from, '');
  t.deepEqual(m.to, [`dest@${REMOTE_DOMAIN}`]);
});

test('API mail to a forwarder goes out in its rendered form (GET /v1/emails/{id}/raw), sender from_email SRS-rewritten', async (t) => {
  const { app, key, sink } = await startWorld(t, { mailboxes: ['keep'], aliases: { [`team@${ALIAS_DOMAIN}`]: [`keep@${ALIAS_DOMAIN}`, `dest@${REMOTE_DOMAIN}`] } });
  const r = await app.post('/v1/mail/inbound', key, {
    message_id: '<api-forward-1@remote.test>', from_email: `ann@${REMOTE_DOMAIN}`, to_email: `team@${ALIAS_DOMAIN}`,
    subject: 'posted', received_at: '2026-11-26T04:00:00Z', body_text: 'sent over the API',
    // HTML and an attachment make it multipart: its boundaries must come out the same in both places.
    body_html: '<p>sent over the <b>API</b></p>',
    attachments: [{ filename: 'note.txt', content_type: 'text/plain', content: Buffer.from('attached').toString('base64') }],
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  const m = await sink.nth(1);
  t.regex(m.from, SRS0);
  const [item] = await waitForItems(app, key, (items) => items[0]?.status === 'sent', 'the item marked sent');
  t.is(typeof item.email_id, 'number');
  const rendered = await fetch(`${app.base}/v1/emails/${item.email_id}/raw`, { headers: { authorization: `Bearer ${key}` } });
  // The copy kept here is read with this mailbox's spam trace header in front (DECISIONS.md section 18); the forwarded copy has none.
  const bytes = Buffer.from(Buffer.from(await rendered.arrayBuffer()).toString('latin1').replace(/^X-Spam-Status: [^\r\n]*\r\n/, ''), 'latin1');
  t.is(rendered.status, 200);
  t.deepEqual(m.raw.subarray(m.raw.length - bytes.length), bytes);
  t.regex(m.raw.toString('latin1'), /^ARC-Seal: /);
});
