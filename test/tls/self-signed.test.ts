import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import test from 'ava';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { startTestApp, tempDir } from '../helpers/app.js';
import { provision, sendOn, waitForEmails } from '../helpers/smtp.js';
import { generateSelfSigned, SELF_SIGNED_DAYS } from '../../src/tls/self-signed.js';
import { fingerprintNow } from './starttls.js';

const DAY_MS = 24 * 3600 * 1000;
/** The names of this machine every self-signed certificate also carries (DECISIONS.md section 21). */
const LOCAL_NAMES = ', DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1';

function storedCertificate(dataDir: string): X509Certificate {
  return new X509Certificate(readFileSync(join(dataDir, 'tls', 'self-signed.crt')));
}

test('first start makes a self-signed certificate for MAILSTEAD_HOSTNAME, keeps it in the data dir and serves it over STARTTLS', async (t) => {
  const app = await startTestApp(t);
  const keyFile = join(app.dataDir, 'tls', 'self-signed.key');
  t.true(existsSync(keyFile));
  t.is(statSync(keyFile).mode & 0o777, 0o600);
  const cert = storedCertificate(app.dataDir);
  t.is(cert.subjectAltName, `DNS:mx.mailstead.test${LOCAL_NAMES}`);
  t.is(cert.subject, 'CN=mx.mailstead.test');
  t.is(cert.checkHost('mx.mailstead.test', { subject: 'never' }), 'mx.mailstead.test');
  t.false(cert.ca);
  t.true(cert.keyUsage?.includes('1.3.6.1.5.5.7.3.1'), 'extendedKeyUsage serverAuth');
  const lifetime = new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime();
  t.true(lifetime <= 825 * DAY_MS && lifetime >= (SELF_SIGNED_DAYS - 1) * DAY_MS, 'within Apple\'s 825-day limit');
  t.is(app.app.tls.current().source, 'self-signed');
  t.is(await fingerprintNow(app.smtpPort, 'mx.mailstead.test'), cert.fingerprint256);
  t.is(await fingerprintNow(app.smtpPort), cert.fingerprint256, 'also without SNI');
});

test('a restart reuses the stored certificate (same fingerprint); a new hostname gets a new one', async (t) => {
  const dataDir = tempDir(t);
  const first = await startTestApp(t, { dataDir });
  const fingerprint = storedCertificate(dataDir).fingerprint256;
  t.is(await fingerprintNow(first.smtpPort), fingerprint);
  await first.stop();

  const second = await startTestApp(t, { dataDir });
  t.is(storedCertificate(dataDir).fingerprint256, fingerprint);
  t.is(await fingerprintNow(second.smtpPort), fingerprint);
  await second.stop();

  const renamed = await startTestApp(t, { dataDir, env: { MAILSTEAD_HOSTNAME: 'mail.renamed.test' } });
  const cert = storedCertificate(dataDir);
  t.not(cert.fingerprint256, fingerprint);
  t.is(cert.subjectAltName, `DNS:mail.renamed.test${LOCAL_NAMES}`);
  t.is(await fingerprintNow(renamed.smtpPort), cert.fingerprint256);
});

test('an unparseable stored certificate is replaced at start', async (t) => {
  const dataDir = tempDir(t);
  mkdirSync(join(dataDir, 'tls'), { recursive: true });
  writeFileSync(join(dataDir, 'tls', 'self-signed.key'), 'not a key');
  writeFileSync(join(dataDir, 'tls', 'self-signed.crt'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  const app = await startTestApp(t, { dataDir });
  const cert = storedCertificate(dataDir);
  t.is(cert.subjectAltName, `DNS:mx.mailstead.test${LOCAL_NAMES}`);
  t.is(statSync(join(dataDir, 'tls', 'self-signed.key')).mode & 0o777, 0o600);
  t.is(await fingerprintNow(app.smtpPort), cert.fingerprint256);
});

test('a stored certificate that ends within 30 days is replaced at start; one with months left is kept', async (t) => {
  const dataDir = tempDir(t);
  mkdirSync(join(dataDir, 'tls'), { recursive: true });
  const old = await generateSelfSigned('mx.mailstead.test', Date.now() - (SELF_SIGNED_DAYS - 10) * DAY_MS);
  writeFileSync(join(dataDir, 'tls', 'self-signed.key'), old.key, { mode: 0o600 });
  writeFileSync(join(dataDir, 'tls', 'self-signed.crt'), old.cert);
  const oldFingerprint = new X509Certificate(old.cert).fingerprint256;
  const app = await startTestApp(t, { dataDir });
  const replaced = storedCertificate(dataDir);
  t.not(replaced.fingerprint256, oldFingerprint);
  t.true(new Date(replaced.validTo).getTime() > Date.now() + 800 * DAY_MS);
  await app.stop();

  const aged = await generateSelfSigned('mx.mailstead.test', Date.now() - 400 * DAY_MS);
  writeFileSync(join(dataDir, 'tls', 'self-signed.key'), aged.key, { mode: 0o600 });
  writeFileSync(join(dataDir, 'tls', 'self-signed.crt'), aged.cert);
  const again = await startTestApp(t, { dataDir });
  t.is(storedCertificate(dataDir).fingerprint256, new X509Certificate(aged.cert).fingerprint256);
  t.is(await fingerprintNow(again.smtpPort), new X509Certificate(aged.cert).fingerprint256);
});

test('a client that trusts the stored certificate verifies it fully (chain and hostname) and delivers over STARTTLS', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'pinned.test', ['box']);
  const ca = readFileSync(join(app.dataDir, 'tls', 'self-signed.crt'));
  const connect = (servername: string) => {
    const connection = new SMTPConnection({
      host: '127.0.0.1', port: app.smtpPort, secure: false, requireTLS: true, name: 'client.example',
      tls: { ca, servername, rejectUnauthorized: true }, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000,
    });
    return new Promise<SMTPConnection>((resolve, reject) => {
      // A refused handshake arrives as an 'error' event, not through the connect callback.
      connection.once('error', reject);
      connection.connect(() => { connection.off('error', reject); connection.on('error', () => undefined); resolve(connection); });
    });
  };
  const connection = await connect('mx.mailstead.test');
  t.teardown(() => connection.close());
  const res = await sendOn(connection, { from: 'x@example.org', to: ['box@pinned.test'] }, 'From: x@example.org\r\nSubject: pinned\r\nMessage-ID: <pinned-1@example.org>\r\n\r\nverified\r\n');
  t.regex(res.response, /^250 /);
  const [item] = await waitForEmails(app, key, 1);
  const e = (await app.get(`/v1/emails/${item.id}`, key)).body.data;
  t.regex(e.headers.received, /with ESMTPS/);
  // The same trust for another name fails: the certificate names MAILSTEAD_HOSTNAME only.
  await t.throwsAsync(connect('other.mailstead.test'), { message: /altnames|hostname|Host/i });
});

test('the certificate names localhost, 127.0.0.1 and ::1, so a client connecting by address verifies it; an older one without them is replaced', async (t) => {
  const dataDir = tempDir(t);
  // A certificate of an older version: only MAILSTEAD_HOSTNAME, with years left.
  const legacy = await import('selfsigned').then((m) => m.generate([{ name: 'commonName', value: 'mx.mailstead.test' }], {
    keyType: 'rsa', keySize: 2048, algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'mx.mailstead.test' }] }],
  }));
  mkdirSync(join(dataDir, 'tls'), { recursive: true });
  writeFileSync(join(dataDir, 'tls', 'self-signed.key'), legacy.private);
  writeFileSync(join(dataDir, 'tls', 'self-signed.crt'), legacy.cert);
  const app = await startTestApp(t, { dataDir });
  const cert = storedCertificate(dataDir);
  t.not(cert.fingerprint256, new X509Certificate(legacy.cert).fingerprint256);
  t.is(cert.subjectAltName, `DNS:mx.mailstead.test${LOCAL_NAMES}`);
  // A client that trusts the certificate and connects to 127.0.0.1 (no server name) checks the address and accepts it.
  const ca = readFileSync(join(dataDir, 'tls', 'self-signed.crt'));
  for (const host of ['127.0.0.1', 'localhost']) {
    const socket = tls.connect({ host: '127.0.0.1', port: app.imapPort, ca, ...(host === 'localhost' ? { servername: 'localhost' } : {}) });
    t.teardown(() => socket.destroy());
    await new Promise<void>((resolve, reject) => { socket.once('secureConnect', resolve); socket.once('error', reject); });
    t.true(socket.authorized, host);
    t.is(tls.checkServerIdentity(host, socket.getPeerCertificate()), undefined);
    socket.destroy();
  }
});
