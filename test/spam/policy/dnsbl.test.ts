import test from 'ava';
import { startTestApp } from '../../helpers/app.js';
import { provision, sendMail, waitForEmails } from '../../helpers/smtp.js';
import { startZone } from '../../dns/zone.js';
import { dnsblQueryName, meansListed } from '../../../src/spam/policy/dnsbl.js';

const message = (to: string, subject: string) =>
  `From: sender@client.example\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@client.example>\r\n\r\nHello.\r\n`;

/** The metric line of the DNSBL refusals, or 0 when none was counted. */
async function dnsblRefusals(httpPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('mailstead_spam_verdicts_total{result="rejected"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

test('the query names: IPv4 octets and IPv6 nibbles reversed under the zone (RFC 5782)', (t) => {
  t.is(dnsblQueryName('192.0.2.99', 'bl.test'), '99.2.0.192.bl.test');
  t.is(dnsblQueryName('::ffff:127.0.0.2', 'bl.test'), '2.0.0.127.bl.test');
  t.is(dnsblQueryName('2001:db8:1:2::7', 'bl.test'), `${'20010db8000100020000000000000007'.split('').reverse().join('.')}.bl.test`);
  t.is(dnsblQueryName('::1', 'bl.test'), `1.${'0.'.repeat(31)}bl.test`);
  t.is(dnsblQueryName('not an address', 'bl.test'), null);
  t.true(meansListed('127.0.0.2'));
  t.true(meansListed('127.0.0.11'));
  t.false(meansListed('127.255.255.254'), 'the list refused the query: not a listing');
  t.false(meansListed('10.0.0.1'));
});

test('a client listed by a zone is refused at RCPT with 554 5.7.1 naming it; postmaster@ is still accepted; others are not affected', async (t) => {
  const zone = await startZone(t);
  zone.a('2.0.0.127.bl.example', '127.0.0.2');             // 127.0.0.2 listed by the second zone
  zone.a('2.0.0.127.refusing.example', '127.255.255.254'); // the first zone refuses to answer: not listed
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: `127.0.0.1:${zone.port}`, MAILSTEAD_DNSBL_ZONES: 'refusing.example,bl.example' } });
  const { key } = await provision(app, 'dnsbl.test', ['bob', 'postmaster']);

  const refused = await sendMail(app.smtpPort, { from: 'sender@client.example', to: ['bob@dnsbl.test'] }, message('bob@dnsbl.test', 'listed'), { localAddress: '127.0.0.2' })
    .then(() => null, (err: { responseCode?: number; response?: string }) => err);
  t.is(refused?.responseCode, 554);
  t.regex(refused?.response ?? '', /^554 5\.7\.1 .*bl\.example/);
  t.notRegex(refused?.response ?? '', /refusing\.example/);
  t.true(zone.queries.includes('A 2.0.0.127.bl.example'));
  t.true(zone.queries.includes('A 2.0.0.127.refusing.example'));
  t.is(await dnsblRefusals(app.httpPort), 1);

  const postmaster = await sendMail(app.smtpPort, { from: 'sender@client.example', to: ['postmaster@dnsbl.test'] }, message('postmaster@dnsbl.test', 'about my listing'), { localAddress: '127.0.0.2' });
  t.regex(postmaster.response, /^250/);

  // 127.0.0.1 is not listed (NXDOMAIN): its mail is delivered as before.
  const clean = await sendMail(app.smtpPort, { from: 'sender@client.example', to: ['bob@dnsbl.test'] }, message('bob@dnsbl.test', 'clean'));
  t.regex(clean.response, /^250/);
  const stored = await waitForEmails(app, key, 2);
  t.deepEqual(stored.map((e) => e.subject).sort(), ['about my listing', 'clean']);
});

test('DNS failures and a silent list count as not listed: mail is accepted', async (t) => {
  const zone = await startZone(t);
  zone.a('2.0.0.127.down.example', '127.0.0.2');
  zone.failUnder('down.example');
  zone.a('2.0.0.127.slow.example', '127.0.0.2');
  zone.silence('slow.example');
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: `127.0.0.1:${zone.port}`, MAILSTEAD_DNSBL_ZONES: 'down.example,slow.example' } });
  const { key } = await provision(app, 'dnsbl.test', ['bob']);
  const sent = await sendMail(app.smtpPort, { from: 'sender@client.example', to: ['bob@dnsbl.test'] }, message('bob@dnsbl.test', 'lists down'), { localAddress: '127.0.0.2' });
  t.regex(sent.response, /^250/);
  t.is((await waitForEmails(app, key, 1))[0].subject, 'lists down');
  t.is(await dnsblRefusals(app.httpPort), 0);
});

test('answers are cached: the RCPTs of several messages from one client ask each zone once', async (t) => {
  const zone = await startZone(t);
  zone.a('2.0.0.127.bl.example', '127.0.0.2');
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: `127.0.0.1:${zone.port}`, MAILSTEAD_DNSBL_ZONES: 'bl.example' } });
  await provision(app, 'dnsbl.test', ['bob', 'carol']);
  for (let i = 0; i < 3; i++) {
    const err = await sendMail(app.smtpPort, { from: 'sender@client.example', to: ['bob@dnsbl.test', 'carol@dnsbl.test'] }, message('bob@dnsbl.test', `try ${i}`), { localAddress: '127.0.0.2' })
      .then(() => null, (e: { responseCode?: number }) => e);
    t.is(err?.responseCode, 554);
  }
  t.is(zone.queries.filter((q) => q === 'A 2.0.0.127.bl.example').length, 1);
});
