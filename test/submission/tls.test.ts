import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { certificate } from '../helpers/smtp.js';

/** The common name of the certificate a TLS socket was shown, once the handshake is done (no SNI: an IP connect). */
function commonName(socket: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.once('secureConnect', () => {
      const cn = socket.getPeerCertificate().subject?.CN;
      socket.destroy();
      resolve(Array.isArray(cn) ? cn[0] : String(cn));
    });
    socket.once('error', reject);
  });
}

/** Reads from a plain socket until `re` matches what came so far (bounded). */
async function readUntil(socket: Socket, re: RegExp): Promise<string> {
  let got = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${re} in ${JSON.stringify(got)}`)), 30_000);
    const onData = (d: Buffer) => {
      got += d.toString('latin1');
      if (re.test(got)) { clearTimeout(timer); socket.off('data', onData); resolve(got); }
    };
    socket.on('data', onData);
  });
}

/** The certificate's common name on the implicit-TLS port and after STARTTLS on the other. */
async function namesShown(ports: { implicit: number; starttls: number }): Promise<[string, string]> {
  const implicit = await commonName(tlsConnect({ port: ports.implicit, host: '127.0.0.1', rejectUnauthorized: false }));
  const plain = netConnect(ports.starttls, '127.0.0.1');
  await readUntil(plain, /^220 .*\r\n/m);
  plain.write('EHLO client.test\r\n');
  await readUntil(plain, /^250 .*\r\n/m);
  plain.write('STARTTLS\r\n');
  await readUntil(plain, /^220 .*\r\n/m);
  const upgraded = await commonName(tlsConnect({ socket: plain, rejectUnauthorized: false }));
  return [implicit, upgraded];
}

test('both submission ports serve the certificate source and take a swap without a restart', async (t) => {
  const app = await startTestApp(t);
  const ports = { implicit: app.submissionsPort, starttls: app.submissionPort };
  t.deepEqual(await namesShown(ports), ['mx.mailstead.test', 'mx.mailstead.test']);
  const next = await certificate('renewed.mailstead.test');
  app.app.tls.install({ key: Buffer.from(next.key), cert: Buffer.from(next.cert) }, 'files');
  t.deepEqual(await namesShown(ports), ['renewed.mailstead.test', 'renewed.mailstead.test']);
});
