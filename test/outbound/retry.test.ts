import test from 'ava';
import { simpleParser } from 'mailparser';
import { sendMail } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld, waitForItems } from './world.js';

const SENDER = `ann@${REMOTE_DOMAIN}`;
const DEST = `dest@${REMOTE_DOMAIN}`;

/** The delivery-status fields of a DSN's machine-readable part, by lower-cased name. */
async function dsnFields(raw: Buffer) {
  const parsed = await simpleParser(raw);
  const text = raw.toString('latin1');
  const fields = new Map<string, string>();
  for (const m of text.matchAll(/^(Reporting-MTA|Final-Recipient|Action|Status|Diagnostic-Code|Remote-MTA|Arrival-Date):[ \t]*(.*(?:\r\n[ \t].*)*)/gim)) {
    fields.set(m[1].toLowerCase(), m[2].replace(/\r\n[ \t]+/g, ' '));
  }
  return { parsed, fields, text };
}

test('a 4xx reply is retried after the schedule\'s delay and then delivered', async (t) => {
  let refusals = 0;
  const { app, key, sink } = await startWorld(t, { answer: () => (refusals++ < 1 ? '451 4.3.0 greylisted, try later' : null) });
  await sendMail(app.smtpPort, { from: SENDER, to: [`fwd@${ALIAS_DOMAIN}`] }, message(SENDER, `fwd@${ALIAS_DOMAIN}`, 'greylisted'));
  const [deferred] = await waitForItems(app, key, (items) => items[0]?.attempts === 1, 'the first try');
  t.like(deferred, { status: 'queued', attempts: 1, last_response: '451 4.3.0 greylisted, try later' });
  t.true(Date.parse(deferred.next_attempt_at) >= Date.parse(deferred.updated_at) + 900);
  const m = await sink.nth(1);
  t.deepEqual(m.to, [DEST]);
  const [sent] = await waitForItems(app, key, (items) => items[0]?.status === 'sent', 'the second try');
  t.like(sent, { attempts: 2, next_attempt_at: null });
  t.regex(sent.last_response, /^250/);
});

test('a 5xx reply fails the item at once and its sender gets a DSN; a retried failure sends no second DSN', async (t) => {
  const { app, key, sink } = await startWorld(t, { answer: (rcpt) => (rcpt === DEST ? '550 5.1.1 no such user here' : null) });
  const original = message(SENDER, `fwd@${ALIAS_DOMAIN}`, 'to nobody');
  await sendMail(app.smtpPort, { from: SENDER, to: [`fwd@${ALIAS_DOMAIN}`] }, original);
  const dsn = await sink.nth(1);
  t.is(dsn.from, '');
  t.deepEqual(dsn.to, [SENDER]);
  const { parsed, fields, text } = await dsnFields(dsn.raw);
  t.regex(String(parsed.headers.get('content-type') && (parsed.headers.get('content-type') as any).value), /multipart\/report/);
  t.regex(text, /report-type="?delivery-status"?/i);
  t.is(parsed.from?.value[0].address, 'MAILER-DAEMON@mx.mailstead.test');
  t.is(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value[0].address : null, SENDER);
  t.is(fields.get('final-recipient'), `rfc822; ${DEST}`);
  t.is(fields.get('action'), 'failed');
  t.is(fields.get('status'), '5.1.1');
  t.is(fields.get('diagnostic-code'), 'smtp; 550 5.1.1 no such user here');
  t.regex(fields.get('reporting-mta') ?? '', /^dns; ?mx\.mailstead\.test$/);
  t.regex(text, /Subject: to nobody/, 'the original headers are attached');

  const items = await waitForItems(app, key, (all) => all.length === 2 && all.every((i) => i.status !== 'queued'), 'the forward failed and its DSN sent');
  const forward = items.find((i) => i.kind === 'forward');
  const report = items.find((i) => i.kind === 'dsn');
  t.like(forward, { status: 'failed', attempts: 1, last_response: '550 5.1.1 no such user here', next_attempt_at: null });
  t.like(report, { status: 'sent', mail_from: '', rcpt_to: SENDER, email_id: null });

  t.deepEqual((await app.post(`/v1/outbound/${forward.id}/retry`, key)).body, { status: 'success' });
  await waitFor(async () => (await app.get(`/v1/outbound/${forward.id}`, key)).body.data.attempts === 2, 'the retried try');
  const again = (await app.get(`/v1/outbound/${forward.id}`, key)).body.data;
  t.like(again, { status: 'failed', attempts: 2 });
  t.is((await app.get('/v1/outbound', key)).body.data.length, 2, 'no second DSN');
  t.is(sink.messages.length, 1);
});

test('an item still refused with 4xx when its maximum age passes fails with a 4.4.7 DSN', async (t) => {
  const { app, key, sink } = await startWorld(t, {
    answer: (rcpt) => (rcpt === DEST ? '450 4.2.1 mailbox busy' : null),
    env: { MAILSTEAD_OUTBOUND_MAX_AGE_SECONDS: '2' },
  });
  await sendMail(app.smtpPort, { from: SENDER, to: [`fwd@${ALIAS_DOMAIN}`] }, message(SENDER, `fwd@${ALIAS_DOMAIN}`, 'too slow'));
  const dsn = await sink.nth(1);
  t.deepEqual(dsn.to, [SENDER]);
  const { fields } = await dsnFields(dsn.raw);
  t.is(fields.get('status'), '4.4.7');
  t.is(fields.get('diagnostic-code'), 'smtp; 450 4.2.1 mailbox busy');
  const items = await waitForItems(app, key, (all) => all.some((i) => i.kind === 'forward' && i.status === 'failed'), 'the forward failed');
  const forward = items.find((i) => i.kind === 'forward');
  t.true(forward.attempts >= 2);
  t.is(forward.last_response, '450 4.2.1 mailbox busy');
});
