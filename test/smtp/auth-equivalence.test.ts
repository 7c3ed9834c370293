import test from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { authenticate } from 'mailauth';
import { createTransport } from 'nodemailer';
import { createLogger } from '../../src/logger.js';
import { cachedLookup, createPromiseResolver } from '../../src/mailauth/dns.js';
import { createAuthenticator, summarize, unsignedHeaderFrom } from '../../src/mailauth/verify.js';
import { startZone } from '../dns/zone.js';

const HOSTNAME = 'mx.auth.test';

/** Our authenticator and the resolver mailauth's own `authenticate()` is given, over the same DNS server. */
function bothOver(port: number) {
  const servers = [`127.0.0.1:${port}`];
  const dns = createPromiseResolver(servers);
  return {
    mine: createAuthenticator({ hostname: HOSTNAME, dnsServers: servers, logger: createLogger('silent') }),
    resolver: cachedLookup((name, rrtype) => dns.resolve(name, rrtype) as Promise<string[][] | string[]>),
  };
}

async function build(dkim: { privateKey: string } | null, from: string): Promise<Buffer> {
  const transport = createTransport({ streamTransport: true, buffer: true, ...(dkim ? { dkim: { domainName: 'sender.example', keySelector: 's1', privateKey: dkim.privateKey } } : {}) });
  const info = await transport.sendMail({ from, to: 'bob@auth.test', subject: 'Equivalence', text: 'Body.\n', messageId: '<eq@sender.example>' });
  return info.message as Buffer;
}

test('the authenticator gives the verdicts of mailauth authenticate(), signed or not, aligned or not, and reused', async (t) => {
  const zone = await startZone(t);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  zone.txt('sender.example', 'v=spf1 ip4:127.0.0.1 -all');
  zone.txt('other.example', 'v=spf1 ip4:192.0.2.9 -all');
  zone.txt('s1._domainkey.sender.example', `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`);
  zone.txt('_dmarc.sender.example', 'v=DMARC1; p=reject');
  zone.txt('_dmarc.other.example', 'v=DMARC1; p=quarantine');
  const { mine, resolver } = bothOver(zone.port);
  const key = { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };

  const cases = [
    { name: 'unsigned, SPF aligned', raw: await build(null, 'Alice <alice@sender.example>'), mailFrom: 'alice@sender.example', ip: '127.0.0.1' },
    { name: 'unsigned, SPF fails', raw: await build(null, 'Alice <alice@other.example>'), mailFrom: 'alice@other.example', ip: '127.0.0.1' },
    { name: 'unsigned, null sender', raw: await build(null, 'Mailer <mailer-daemon@sender.example>'), mailFrom: null, ip: '127.0.0.1' },
    { name: 'signed and aligned', raw: await build(key, 'Alice <alice@sender.example>'), mailFrom: 'alice@sender.example', ip: '127.0.0.1' },
    { name: 'signed, SPF from another address', raw: await build(key, 'Alice <alice@sender.example>'), mailFrom: 'bounce@other.example', ip: '::ffff:127.0.0.1' },
  ];
  for (const c of cases) {
    const ip = c.ip.replace(/^::ffff:/, '');
    const expected = summarize(await (async () => {
      const r = await authenticate(c.raw, { ip, helo: 'client.example', sender: c.mailFrom ?? '', mta: HOSTNAME, resolver, disableArc: true, disableBimi: true });
      return { dkim: r.dkim.results, spf: r.spf || null, dmarc: r.dmarc };
    })());
    const env = { remoteAddress: c.ip, heloName: 'client.example', mailFrom: c.mailFrom };
    t.deepEqual(await mine(c.raw, env, c.raw), expected, c.name);
    t.deepEqual(await mine(c.raw, env, null), expected, `${c.name}, without the head`);
    // Asked again within the verdict window: answered from the cache, same verdict.
    t.deepEqual(await mine(c.raw, env, c.raw), expected, `${c.name}, reused`);
  }
});

test('only a complete header block without DKIM or ARC headers counts as unsigned', (t) => {
  t.deepEqual(unsignedHeaderFrom(Buffer.from('From: "A, B" <a@x.example>, c@y.example\r\nTo: z@z.example\r\n\r\nbody')), ['a@x.example', 'c@y.example']);
  t.deepEqual(unsignedHeaderFrom(Buffer.from('Subject: no from\r\n\r\n')), []);
  t.is(unsignedHeaderFrom(Buffer.from('DKIM-Signature: v=1; d=x.example\r\nFrom: a@x.example\r\n\r\n')), null);
  t.is(unsignedHeaderFrom(Buffer.from('ARC-Seal: i=1\r\nFrom: a@x.example\r\n\r\n')), null);
  t.is(unsignedHeaderFrom(Buffer.from('From: a@x.example\r\nSubject: the head was cut here')), null);
  t.is(unsignedHeaderFrom(Buffer.from('From: a@x.example\r\nnot a header line\r\nDKIM-Signature: v=1\r\n\r\n')), null, 'an unreadable line leaves the judgement to mailauth');
});

test('over the whole message corpus the verdicts are those of mailauth authenticate()', async (t) => {
  const zone = await startZone(t);
  zone.txt('example.com', 'v=spf1 ip4:127.0.0.1 -all');
  zone.txt('_dmarc.example.com', 'v=DMARC1; p=none');
  const { mine, resolver } = bothOver(zone.port);
  const dir = new URL('../fixtures/mail/', import.meta.url);
  const names = readdirSync(dir).filter((n) => n.endsWith('.eml'));
  t.true(names.length >= 30);
  for (const name of names) {
    const raw = readFileSync(new URL(name, dir));
    for (const mailFrom of ['sender@example.com', null]) {
      const r = await authenticate(raw, { ip: '127.0.0.1', helo: 'client.example', sender: mailFrom ?? '', mta: HOSTNAME, resolver, disableArc: true, disableBimi: true });
      const expected = summarize({ dkim: r.dkim.results, spf: r.spf || null, dmarc: r.dmarc });
      t.deepEqual(await mine(raw, { remoteAddress: '127.0.0.1', heloName: 'client.example', mailFrom }, raw), expected, `${name} from ${mailFrom}`);
    }
  }
});
