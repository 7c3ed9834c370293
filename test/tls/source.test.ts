import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import test from 'ava';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createCertificateSource } from '../../src/tls/index.js';
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
