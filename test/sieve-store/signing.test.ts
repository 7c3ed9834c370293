import test from 'ava';
import { authenticate } from 'mailauth';
import { sendMail } from '../helpers/smtp.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld, type World } from '../outbound/world.js';

const BOX = `ann@${ALIAS_DOMAIN}`;
const SENDER = `bob@${REMOTE_DOMAIN}`;

/** The DKIM result of the signature by `domain` on a message the sink received, as a receiver checks it (the zone holds the published key). */
async function dkimOf(world: World, m: { raw: Buffer; from: string }, domain: string): Promise<string | undefined> {
  const resolver = world.zone.resolver();
  const verdict = await authenticate(m.raw, {
    ip: '127.0.0.1', helo: 'mx.mailstead.test', sender: m.from, mta: 'mx.remote.test',
    resolver: (name: string, rrtype: string) => resolver.resolve(name, rrtype) as Promise<any>,
  });
  return verdict.dkim.results.find((r: any) => r.signingDomain === domain)?.status.result;
}

test('a refusal (reject) and a Sieve vacation reply leave signed by the mailbox domain, and the signatures verify', async (t) => {
  const world = await startWorld(t, { mailboxes: ['ann'], aliases: {}, env: { MAILSTEAD_LOG_LEVEL: 'silent' } });
  const { app, key, sink } = world;
  const script = `require ["reject", "vacation"];
if header :contains "subject" "unwanted" { reject "We do not want this."; stop; }
vacation :days 1 :subject "Away" "Back on Monday.";
`;
  const put = await app.request('PUT', `/v1/mailboxes/${encodeURIComponent(BOX)}/sieve/main`, { key, body: { script, active: true } });
  t.is(put.status, 200, JSON.stringify(put.body));

  await sendMail(app.smtpPort, { from: SENDER, to: [BOX] }, message(SENDER, BOX, 'unwanted offer'));
  const refusal = await sink.nth(1);
  t.is(refusal.from, '');
  t.regex(refusal.raw.toString('latin1'), /^From: Mail Delivery System <MAILER-DAEMON@alias\.test>\r$/m);
  t.regex(refusal.raw.toString('latin1'), /^DKIM-Signature: .*d=alias\.test/m);
  t.is(await dkimOf(world, refusal, ALIAS_DOMAIN), 'pass');

  await sendMail(app.smtpPort, { from: SENDER, to: [BOX] }, message(SENDER, BOX, 'lunch next week'));
  const reply = await sink.nth(2);
  t.is(reply.from, '');
  t.regex(reply.raw.toString('latin1'), /^Subject: Away\r$/m);
  t.is(await dkimOf(world, reply, ALIAS_DOMAIN), 'pass');
});

test('a vacation reply from an address of a domain not hosted here leaves unsigned (no key of ours to sign with)', async (t) => {
  const world = await startWorld(t, { mailboxes: ['ann'], aliases: {}, env: { MAILSTEAD_LOG_LEVEL: 'silent' } });
  const { app, key, sink } = world;
  const script = `require ["vacation"];\nvacation :days 1 :from "ann@elsewhere.example" :addresses ["ann@elsewhere.example"] "Back on Monday.";\n`;
  const put = await app.request('PUT', `/v1/mailboxes/${encodeURIComponent(BOX)}/sieve/main`, { key, body: { script, active: true } });
  t.is(put.status, 200, JSON.stringify(put.body));
  await sendMail(app.smtpPort, { from: SENDER, to: [BOX] }, message(SENDER, BOX, 'hello'));
  const reply = await sink.nth(1);
  t.regex(reply.raw.toString('latin1'), /^From: <ann@elsewhere\.example>\r$/m);
  t.false(/^DKIM-Signature:/im.test(reply.raw.toString('latin1')));
});

test('the REST vacation reply leaves signed by the mailbox domain, and the signature verifies', async (t) => {
  const world = await startWorld(t, { mailboxes: ['ann'], aliases: {}, env: { MAILSTEAD_LOG_LEVEL: 'silent' } });
  const { app, key, sink } = world;
  const put = await app.request('PUT', `/v1/mailboxes/${encodeURIComponent(BOX)}/vacation`, { key, body: { enabled: true, subject: 'Out of office', body: 'Back on Monday.', days: 1 } });
  t.is(put.status, 200, JSON.stringify(put.body));
  await sendMail(app.smtpPort, { from: SENDER, to: [BOX] }, message(SENDER, BOX, 'are you there'));
  const reply = await sink.nth(1);
  t.is(reply.from, '');
  t.regex(reply.raw.toString('latin1'), /^Subject: Out of office\r$/m);
  t.regex(reply.raw.toString('latin1'), /^DKIM-Signature: .*d=alias\.test/m);
  t.is(await dkimOf(world, reply, ALIAS_DOMAIN), 'pass');
});
