import test from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { startTestApp } from '../helpers/app.js';
import { provision, sendMail, waitForEmails } from '../helpers/smtp.js';
import { startZone } from '../dns/zone.js';

/** A message signed the way a real sending server signs it (nodemailer's DKIM signer). */
async function signedMessage(privateKey: string, domain: string, selector: string): Promise<Buffer> {
  const transport = createTransport({ streamTransport: true, buffer: true, dkim: { domainName: domain, keySelector: selector, privateKey } });
  const info = await transport.sendMail({
    from: `Alice <alice@${domain}>`, to: 'bob@auth.test', subject: 'Signed and aligned', text: 'Authenticated mail.\n',
    messageId: `<signed-1@${domain}>`,
  });
  return info.message as Buffer;
}

test('SPF, DKIM and DMARC pass for a signed message from an authorised address, and are stored with the email', async (t) => {
  const zone = await startZone(t);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  zone.txt('sender.example', 'v=spf1 ip4:127.0.0.1 -all');
  zone.txt('s1._domainkey.sender.example', `v=DKIM1; k=rsa; p=${spki}`);
  zone.txt('_dmarc.sender.example', 'v=DMARC1; p=reject');
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: `127.0.0.1:${zone.port}` } });
  const { key } = await provision(app, 'auth.test', ['bob']);

  const raw = await signedMessage(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 'sender.example', 's1');
  const sent = await sendMail(app.smtpPort, { from: 'alice@sender.example', to: ['bob@auth.test'] }, raw);
  t.regex(sent.response ?? '', /^250/);
  const [item] = await waitForEmails(app, key, 1);
  const email = (await app.get(`/v1/emails/${item.id}`, key)).body.data;
  t.is(email.auth.spf.result, 'pass');
  t.is(email.auth.dkim.result, 'pass');
  t.is(email.auth.dmarc.result, 'pass');
  t.true(zone.queries.includes('TXT s1._domainkey.sender.example'), 'the DKIM key was looked up in our DNS');
});

test('a forged sender fails SPF and DMARC; a tampered signed header fails DKIM', async (t) => {
  const zone = await startZone(t);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  zone.txt('sender.example', 'v=spf1 ip4:192.0.2.1 -all');
  zone.txt('s1._domainkey.sender.example', `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`);
  // p=none: a failure is recorded only (p=reject would refuse it before the 250: test/spam/policy/dmarc.test.ts).
  zone.txt('_dmarc.sender.example', 'v=DMARC1; p=none');
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: `127.0.0.1:${zone.port}` } });
  const { key } = await provision(app, 'auth.test', ['bob']);

  const signed = await signedMessage(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 'sender.example', 's1');
  const tampered = Buffer.from(signed.toString('latin1').replace('Subject: Signed and aligned', 'Subject: Signed and altered'), 'latin1');
  const sent = await sendMail(app.smtpPort, { from: 'alice@sender.example', to: ['bob@auth.test'] }, tampered);
  t.regex(sent.response ?? '', /^250/, 'under p=none authentication results are recorded, not enforced');
  const [item] = await waitForEmails(app, key, 1);
  const email = (await app.get(`/v1/emails/${item.id}`, key)).body.data;
  t.is(email.auth.spf.result, 'fail');
  t.is(email.auth.dkim.result, 'fail');
  t.is(email.auth.dmarc.result, 'fail');
});
