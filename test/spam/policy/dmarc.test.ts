import test from 'ava';
import { createAuthenticator } from '../../../src/mailauth/verify.js';
import { cachedLookup, createPromiseResolver } from '../../../src/mailauth/dns.js';
import { createLogger } from '../../../src/logger.js';
import { createDmarcGate, headerFromAddresses } from '../../../src/spam/policy/dmarc.js';
import type { RawDelivery } from '../../../src/inbound/types.js';
import { spamLists } from '../../../src/spam/lists.js';
import { startTestApp } from '../../helpers/app.js';
import { whoIs } from '../../helpers/mailboxes.js';
import { provision, sendMail, waitForEmails } from '../../helpers/smtp.js';
import { startZone, type Zone } from '../../dns/zone.js';

const message = (from: string, subject: string) =>
  `From: Alice <${from}>\r\nTo: bob@dmarc.test\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@client.example>\r\n\r\nHello.\r\n`;

/** Messages refused before the 250 (the verdict `rejected` in /metrics), or 0. */
async function refusals(httpPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('mailstead_spam_verdicts_total{result="rejected"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** sender.example: SPF allows 192.0.2.1 only (mail from 127.0.0.1 fails), DMARC reject; its subdomains sp=reject under p=none at news.example. */
function publish(zone: Zone) {
  zone.txt('sender.example', 'v=spf1 ip4:192.0.2.1 -all');
  zone.txt('_dmarc.sender.example', 'v=DMARC1; p=reject');
  zone.txt('news.example', 'v=spf1 ip4:192.0.2.1 -all');
  zone.txt('_dmarc.news.example', 'v=DMARC1; p=none; sp=reject');
  zone.txt('good.example', 'v=spf1 ip4:127.0.0.1 -all');
  zone.txt('_dmarc.good.example', 'v=DMARC1; p=reject');
  zone.txt('_dmarc.sample.example', 'v=DMARC1; p=reject; pct=10');
}

test('DMARC fail under p=reject is refused at the end of DATA with 550 5.7.1 naming DMARC; sp=reject for subdomains; passing mail is taken', async (t) => {
  const zone = await startZone(t);
  publish(zone);
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: `127.0.0.1:${zone.port}` } });
  const { key } = await provision(app, 'dmarc.test', ['bob']);
  const send = (mailFrom: string, from: string, subject: string) =>
    sendMail(app.smtpPort, { from: mailFrom, to: ['bob@dmarc.test'] }, message(from, subject)).then(
      (r) => ({ code: 250, response: r.response }),
      (err: { responseCode?: number; response?: string }) => ({ code: err.responseCode, response: err.response ?? '' }),
    );

  const forged = await send('alice@sender.example', 'alice@sender.example', 'forged');
  t.is(forged.code, 550);
  t.regex(forged.response, /^550 5\.7\.1 .*DMARC.*sender\.example/);

  const sub = await send('alice@mail.news.example', 'alice@mail.news.example', 'forged subdomain');
  t.is(sub.code, 550, 'sp=reject applies to a subdomain of the record\'s domain');
  t.regex(sub.response, /DMARC/);

  const organisational = await send('alice@news.example', 'alice@news.example', 'p none');
  t.is(organisational.code, 250, 'p=none at the domain itself: recorded, not enforced');

  const passing = await send('alice@good.example', 'alice@good.example', 'aligned spf');
  t.is(passing.code, 250, 'SPF passes and aligns: DMARC pass');

  const sampled = await send('alice@sample.example', 'alice@sample.example', 'pct ten');
  t.is(sampled.code, 250, 'pct below 100 asks for the policy on a sample only: never refused');

  t.is(await refusals(app.httpPort), 2);
  const stored = await waitForEmails(app, key, 3);
  t.deepEqual(stored.map((e) => e.subject).sort(), ['aligned spf', 'p none', 'pct ten']);
  // Mail verified before the 250 keeps those results: its SPF record was asked for once, not again after the 250.
  const aligned = (await app.get(`/v1/emails/${stored.find((e) => e.subject === 'aligned spf')!.id}`, key)).body.data;
  t.like(aligned.auth, { spf: { result: 'pass' }, dmarc: { result: 'pass' } });
  t.is(zone.queries.filter((q) => q === 'TXT good.example').length, 1, 'one SPF verification for mail checked under p=reject');
  t.true(zone.queries.filter((q) => q === 'TXT news.example').length >= 1, 'mail not verified before the 250 is verified after it');

  // An allow entry of the recipient's tenant waives the refusal (the lists' service, as the REST API stores entries).
  const { tenantId } = await whoIs(app, key);
  await spamLists.add(app.app.db, tenantId, { kind: 'allow', pattern: '@sender.example' }, Date.now());
  t.is((await send('alice@sender.example', 'alice@sender.example', 'forged but allowed')).code, 250);
  t.is(await refusals(app.httpPort), 2);
});

test('the gate looks up only the DMARC record when the policy is not reject, verifies when it is, and honours the allow list', async (t) => {
  const zone = await startZone(t);
  publish(zone);
  zone.txt('_dmarc.quiet.example', 'v=DMARC1; p=quarantine');
  zone.txt('quiet.example', 'v=spf1 ip4:192.0.2.1 -all');
  const logger = createLogger('silent');
  const dns = createPromiseResolver([`127.0.0.1:${zone.port}`]);
  const allowed = new Set<string>();
  const gate = createDmarcGate({
    lookup: cachedLookup((name, rrtype) => dns.resolve(name, rrtype) as Promise<string[][] | string[]>),
    authenticate: createAuthenticator({ hostname: 'mx.mailstead.test', dnsServers: [`127.0.0.1:${zone.port}`], logger }),
    allowedSender: async (tenantIds, from) => tenantIds.includes(7) && allowed.has(from),
    logger,
  });
  const delivery = (from: string): RawDelivery => {
    const raw = Buffer.from(message(from, 'gate'));
    return {
      raw: { chunks: [raw], length: raw.length }, size: raw.length, mailFrom: from, remoteAddress: '127.0.0.1', heloName: 'client.example', tls: false, receivedAt: 0,
      recipients: [{ address: 'bob@dmarc.test', resolution: { kind: 'deliver', tenantId: 7, mailboxIds: [1], forwards: [] } }],
    };
  };

  t.deepEqual(await gate(delivery('alice@quiet.example')), {});
  t.deepEqual(zone.queries.filter((q) => q.includes('quiet.example')), ['TXT _dmarc.quiet.example'], 'no SPF or DKIM lookups for a domain without a reject policy');

  const refused = await gate(delivery('alice@sender.example'));
  t.is(refused.refuse?.responseCode, 550);
  t.is(refused.auth, undefined);
  t.true(zone.queries.includes('TXT sender.example'), 'under p=reject the message is verified (SPF looked up)');

  allowed.add('alice@sender.example');
  const waived = await gate(delivery('alice@sender.example'));
  t.is(waived.refuse, undefined, 'an allow-list entry of the recipient\'s tenant lets it through');
  t.is(waived.auth?.dmarc?.result, 'fail', 'with the results of its verification, for the parser to keep');
  t.is((await gate(delivery('alice@good.example'))).auth?.dmarc?.result, 'pass');
});

test('the From addresses of a header block, as mailauth reads them', (t) => {
  t.deepEqual(headerFromAddresses(Buffer.from('Subject: x\r\nFrom: "A, B" <a@x.example>\r\n\r\nFrom: body@y.example\r\n')), ['a@x.example']);
  t.deepEqual(headerFromAddresses(Buffer.from('From: a@x.example, b@y.example\r\n\r\n')), ['a@x.example', 'b@y.example']);
  t.deepEqual(headerFromAddresses(Buffer.from('Subject: no from\r\n\r\n')), []);
});
