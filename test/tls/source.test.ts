import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import test from 'ava';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createCertificateSource } from '../../src/tls/index.js';
import { generateSelfSigned, SELF_SIGNED_DAYS } from '../../src/tls/self-signed.js';
import { tempDir, TEST_ENV } from '../helpers/app.js';
import { certificate } from '../helpers/smtp.js';

/** The fingerprint an implicit-TLS client sees on 127.0.0.1:port, with or without SNI. */
async function served(port: number, servername?: string): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...(servername ? { servername } : {}) });
  try {
    await once(socket, 'secureConnect');
    return socket.getPeerCertificate().fingerprint256;
  } finally {
    socket.destroy();
  }
}

async function source(t: import('ava').ExecutionContext) {
  const config = loadConfig({ ...TEST_ENV, MAILSTEAD_DATA_DIR: tempDir(t) });
  const tls = await createCertificateSource({ config, logger: createLogger('silent') });
  t.teardown(() => tls.close());
  return tls;
}

test('an attached implicit-TLS server serves every installed pair to new handshakes, with and without SNI; detached, only SNI follows', async (t) => {
  const tls = await source(t);
  const first = new X509Certificate(tls.current().cert).fingerprint256;
  const server = createServer(tls.serverOptions(), (socket) => socket.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const detach = tls.attach(server);
  t.is(await served(port), first);

  const acme = await certificate('mx.mailstead.test');
  const contextBefore = tls.secureContext();
  tls.install({ key: Buffer.from(acme.key), cert: Buffer.from(acme.cert) }, 'acme');
  const second = new X509Certificate(acme.cert).fingerprint256;
  t.is(tls.current().source, 'acme');
  t.not(tls.secureContext(), contextBefore);
  t.is(await served(port), second);
  t.is(await served(port, 'mx.mailstead.test'), second);

  detach();
  const third = await certificate('third.mailstead.test');
  tls.install({ key: Buffer.from(third.key), cert: Buffer.from(third.cert) }, 'files');
  t.is(await served(port), second, 'a detached server keeps its own default context');
  t.is(await served(port, 'mx.mailstead.test'), new X509Certificate(third.cert).fingerprint256, 'its SNICallback still follows the source');
});

test('onSwap listeners hear every swap until they unregister; a refused pair reaches nobody', async (t) => {
  const tls = await source(t);
  const heard: string[] = [];
  const off = tls.onSwap(({ cert }) => heard.push(new X509Certificate(cert).subject));
  const a = await certificate('a.mailstead.test');
  tls.install({ key: Buffer.from(a.key), cert: Buffer.from(a.cert) }, 'files');
  t.throws(() => tls.install({ key: Buffer.from('nope'), cert: Buffer.from(a.cert) }, 'files'));
  off();
  const b = await certificate('b.mailstead.test');
  tls.install({ key: Buffer.from(b.key), cert: Buffer.from(b.cert) }, 'files');
  t.deepEqual(heard, ['CN=a.mailstead.test']);
  t.is(new X509Certificate(tls.current().cert).subject, 'CN=b.mailstead.test');
});

test('a running process renews its self-signed certificate when it comes within 30 days of its end', async (t) => {
  const DAY_MS = 24 * 3600 * 1000;
  const dataDir = tempDir(t);
  mkdirSync(join(dataDir, 'tls'), { recursive: true });
  const ageing = await generateSelfSigned('mx.mailstead.test', Date.now() - (SELF_SIGNED_DAYS - 40) * DAY_MS);
  writeFileSync(join(dataDir, 'tls', 'self-signed.key'), ageing.key, { mode: 0o600 });
  writeFileSync(join(dataDir, 'tls', 'self-signed.crt'), ageing.cert);
  let now = Date.now();
  const config = loadConfig({ ...TEST_ENV, MAILSTEAD_DATA_DIR: dataDir });
  const tls = await createCertificateSource({ config, logger: createLogger('silent'), now: () => now, renewalCheckMs: 50 });
  t.teardown(() => tls.close());
  t.true(tls.current().cert.equals(ageing.cert), '40 days left: kept at start');
  const swaps: string[] = [];
  tls.onSwap(({ cert }) => swaps.push(new X509Certificate(cert).fingerprint256));

  now += 15 * DAY_MS; // 25 days left
  const deadline = Date.now() + 20_000;
  while (swaps.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.is(swaps.length, 1);
  t.is(tls.current().source, 'self-signed');
  const renewed = new X509Certificate(tls.current().cert);
  t.is(renewed.fingerprint256, swaps[0]);
  t.is(renewed.subjectAltName, 'DNS:mx.mailstead.test, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  t.true(new Date(renewed.validTo).getTime() > now + 800 * DAY_MS);
  t.is(new X509Certificate(readFileSync(join(dataDir, 'tls', 'self-signed.crt'))).fingerprint256, renewed.fingerprint256, 'stored for the next start');
});

test('the renewal check leaves a certificate installed from files or ACME alone', async (t) => {
  const dataDir = tempDir(t);
  let now = Date.now();
  const config = loadConfig({ ...TEST_ENV, MAILSTEAD_DATA_DIR: dataDir });
  const tls = await createCertificateSource({ config, logger: createLogger('silent'), now: () => now, renewalCheckMs: 20 });
  t.teardown(() => tls.close());
  const stored = readFileSync(join(dataDir, 'tls', 'self-signed.crt'));
  const acme = await certificate('mx.mailstead.test');
  tls.install({ key: Buffer.from(acme.key), cert: Buffer.from(acme.cert) }, 'acme');
  now += 900 * 24 * 3600 * 1000; // the stored self-signed certificate has run out
  // Three checks finished after the clock moved: each looked and left the certificate alone.
  const from = tls.renewalChecks();
  for (const deadline = Date.now() + 30_000; tls.renewalChecks() < from + 3;) {
    if (Date.now() > deadline) throw new Error('no renewal checks');
    await new Promise((r) => setTimeout(r, 20));
  }
  t.is(tls.current().source, 'acme');
  t.true(tls.current().cert.equals(Buffer.from(acme.cert)));
  t.true(readFileSync(join(dataDir, 'tls', 'self-signed.crt')).equals(stored));
});
