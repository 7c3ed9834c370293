import { X509Certificate } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { CertificatePairError } from '../../src/tls/index.js';
import { startTestApp, tempDir, TEST_ENV } from '../helpers/app.js';
import { certificate, provision, waitForEmails } from '../helpers/smtp.js';
import { fingerprintNow, startTls } from './starttls.js';

/** PEM files for `commonName` in a temporary directory, and the env that points at them. */
async function pemFiles(t: import('ava').ExecutionContext, commonName: string) {
  const dir = tempDir(t);
  const pems = await certificate(commonName);
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  writeFileSync(certFile, pems.cert);
  writeFileSync(keyFile, pems.key);
  return { certFile, keyFile, pems, fingerprint: new X509Certificate(pems.cert).fingerprint256, env: { MAILSTEAD_TLS_CERT: certFile, MAILSTEAD_TLS_KEY: keyFile } };
}

test('MAILSTEAD_TLS_CERT/KEY take precedence: their pair is served and no self-signed one is made', async (t) => {
  const files = await pemFiles(t, 'files.mailstead.test');
  const app = await startTestApp(t, { env: files.env });
  t.is(app.app.tls.current().source, 'files');
  t.true(app.app.tls.current().cert.equals(Buffer.from(files.pems.cert)));
  t.is(await fingerprintNow(app.smtpPort, 'mx.mailstead.test'), files.fingerprint);
  t.is(await fingerprintNow(app.smtpPort), files.fingerprint);
  t.false(existsSync(join(app.dataDir, 'tls', 'self-signed.crt')));
});

test('reloadFiles swaps the certificate of new STARTTLS handshakes while an open TLS session stays up and delivers', async (t) => {
  const files = await pemFiles(t, 'before.mailstead.test');
  const app = await startTestApp(t, { env: files.env });
  const { key } = await provision(app, 'swap.test', ['kept']);
  const open = await startTls(app.smtpPort, 'mx.mailstead.test');
  t.teardown(() => open.close());
  t.is(open.fingerprint, files.fingerprint);

  const renewed = await certificate('after.mailstead.test');
  writeFileSync(files.certFile, renewed.cert);
  writeFileSync(files.keyFile, renewed.key);
  await app.app.tls.reloadFiles();
  const renewedFingerprint = new X509Certificate(renewed.cert).fingerprint256;
  t.is(await fingerprintNow(app.smtpPort, 'mx.mailstead.test'), renewedFingerprint, 'with SNI');
  t.is(await fingerprintNow(app.smtpPort), renewedFingerprint, 'without SNI');

  // The session opened before the swap keeps its TLS and completes a transaction.
  t.regex(await open.command('EHLO client.example'), /^250 /);
  t.regex(await open.command('MAIL FROM:<x@example.org>'), /^250 /);
  t.regex(await open.command('RCPT TO:<kept@swap.test>'), /^250 /);
  t.regex(await open.command('DATA'), /^354 /);
  t.regex(await open.command('From: x@example.org\r\nSubject: across the swap\r\nMessage-ID: <swap-1@example.org>\r\n\r\nstill here\r\n.'), /^250 /);
  t.is(open.socket.getPeerCertificate().fingerprint256, files.fingerprint);
  const [item] = await waitForEmails(app, key, 1);
  t.is(item.subject, 'across the swap');
});

test('a mismatched or unreadable pair is refused by reloadFiles and install; the old one keeps serving', async (t) => {
  const files = await pemFiles(t, 'good.mailstead.test');
  const app = await startTestApp(t, { env: files.env });
  const other = await certificate('other.mailstead.test');

  writeFileSync(files.keyFile, other.key); // the key of another certificate
  await t.throwsAsync(app.app.tls.reloadFiles(), { instanceOf: CertificatePairError, message: /does not match/ });
  t.is(await fingerprintNow(app.smtpPort), files.fingerprint);
  t.is(await fingerprintNow(app.smtpPort, 'mx.mailstead.test'), files.fingerprint);

  writeFileSync(files.keyFile, files.pems.key);
  writeFileSync(files.certFile, 'garbage');
  await t.throwsAsync(app.app.tls.reloadFiles(), { instanceOf: CertificatePairError });
  t.throws(() => app.app.tls.install({ key: Buffer.from(other.key), cert: Buffer.from(files.pems.cert) }, 'acme'), { instanceOf: CertificatePairError });
  t.is(app.app.tls.current().source, 'files');
  t.true(app.app.tls.current().cert.equals(Buffer.from(files.pems.cert)));
  t.is(await fingerprintNow(app.smtpPort), files.fingerprint);
});

test('a mismatched pair in the files stops the start with a clear error', async (t) => {
  const files = await pemFiles(t, 'broken.mailstead.test');
  writeFileSync(files.keyFile, (await certificate('else.mailstead.test')).key);
  const config = loadConfig({ ...TEST_ENV, MAILSTEAD_DATA_DIR: tempDir(t), ...files.env });
  await t.throwsAsync(createApp({ config, logger: createLogger('silent') }), { instanceOf: CertificatePairError, message: /does not match/ });
});
