import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import test from 'ava';
import { startTestApp, tempDir } from '../helpers/app.js';
import { certificate, peerCommonName, provision, rawSession, sendMail, waitForEmails } from '../helpers/smtp.js';

/** The app with STARTTLS on, from a certificate for `commonName` generated at test time. */
async function appWithCertificate(t: import('ava').ExecutionContext, commonName: string) {
  const dir = tempDir(t);
  const pems = await certificate(commonName);
  writeFileSync(join(dir, 'cert.pem'), pems.cert);
  writeFileSync(join(dir, 'key.pem'), pems.key);
  return startTestApp(t, { env: { MAILSTEAD_TLS_CERT: join(dir, 'cert.pem'), MAILSTEAD_TLS_KEY: join(dir, 'key.pem') } });
}

test('STARTTLS with a certificate generated at test time: offered, negotiated, recorded in the trace header', async (t) => {
  const app = await appWithCertificate(t, 'first.mailstead.test');
  const { key } = await provision(app, 'tls.test', ['secure']);

  const s = await rawSession(app.smtpPort);
  t.teardown(() => s.close());
  const ehlo = await s.command('EHLO client.example');
  t.true(ehlo.split('\r\n').some((l) => l.slice(4) === 'STARTTLS'));
  t.false(ehlo.includes('AUTH'));
  t.is(await peerCommonName(s), 'first.mailstead.test');

  const res = await sendMail(app.smtpPort, { from: 'x@example.org', to: ['secure@tls.test'] }, 'From: x@example.org\r\nSubject: over tls\r\nMessage-ID: <tls-1@example.org>\r\n\r\nsecret\r\n', { tls: 'require' });
  t.regex(res.response, /^250 /);
  const [item] = await waitForEmails(app, key, 1);
  const e = (await app.get(`/v1/emails/${item.id}`, key)).body.data;
  t.is(e.subject, 'over tls');
  t.regex(e.headers.received, /with ESMTPS id \S+\t\(using TLSv1\.[23] cipher [A-Z0-9_-]+\)/);
});

test('reloadFiles (SIGHUP) picks up a renewed certificate for new sessions; a broken pair keeps the old one', async (t) => {
  const dir = tempDir(t);
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const first = await certificate('old.mailstead.test');
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  const app = await startTestApp(t, { env: { MAILSTEAD_TLS_CERT: certFile, MAILSTEAD_TLS_KEY: keyFile } });

  const cnNow = async () => {
    const s = await rawSession(app.smtpPort);
    try {
      await s.command('EHLO client.example');
      return await peerCommonName(s);
    } finally {
      s.close();
    }
  };
  t.is(await cnNow(), 'old.mailstead.test');

  const renewed = await certificate('new.mailstead.test');
  writeFileSync(certFile, renewed.cert);
  writeFileSync(keyFile, renewed.key);
  await app.app.tls.reloadFiles();
  t.is(await cnNow(), 'new.mailstead.test');

  writeFileSync(keyFile, first.key); // does not match the certificate
  await t.throwsAsync(app.app.tls.reloadFiles(), { message: /does not match/ });
  t.is(await cnNow(), 'new.mailstead.test');
});

test('without certificate files reloadFiles is a no-op: the self-signed pair stays in force', async (t) => {
  const app = await startTestApp(t);
  const before = app.app.tls.current();
  await app.app.tls.reloadFiles();
  t.is(app.app.tls.current().source, 'self-signed');
  t.true(app.app.tls.current().cert.equals(before.cert));
});

test('REQUIRETLS (RFC 8689) is offered under TLS and taken on MAIL there; before STARTTLS it is neither', async (t) => {
  const app = await appWithCertificate(t, 'rt.mailstead.test');
  const plain = await rawSession(app.smtpPort);
  t.teardown(() => plain.close());
  t.false((await plain.command('EHLO client.example')).includes('REQUIRETLS'));
  t.regex(await plain.command('MAIL FROM:<x@example.org> REQUIRETLS'), /^5\d\d /);

  const socket = connect(app.smtpPort, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const lines = (stream: NodeJS.ReadableStream) => {
    let buffer = '';
    const waiting: Array<(reply: string) => void> = [];
    stream.on('data', (d: Buffer) => {
      buffer += d.toString('utf8');
      let m;
      while (waiting.length && (m = /(?:^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffer))) {
        const end = m.index + m[0].length;
        const reply = buffer.slice(0, end);
        buffer = buffer.slice(end);
        waiting.shift()!(reply);
      }
    });
    return () => new Promise<string>((resolve) => waiting.push(resolve));
  };
  const nextPlain = lines(socket);
  await nextPlain();
  socket.write('EHLO client.example\r\n');
  await nextPlain();
  socket.write('STARTTLS\r\n');
  t.regex(await nextPlain(), /^220 /);
  socket.removeAllListeners('data');
  const secure = tlsConnect({ socket, rejectUnauthorized: false, servername: 'rt.mailstead.test' });
  await once(secure, 'secureConnect');
  const next = lines(secure);
  secure.write('EHLO client.example\r\n');
  t.true((await next()).split('\r\n').some((l) => l.slice(4) === 'REQUIRETLS'));
  secure.write('MAIL FROM:<x@example.org> REQUIRETLS\r\n');
  t.regex(await next(), /^250 /);
  secure.end('QUIT\r\n');
});
