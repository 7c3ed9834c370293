import { statSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import test from 'ava';
import { startTls } from '../tls/starttls.js';
import { acmeWorld, DAY_MS, HOSTNAME, leafOf, starttlsChain, startAcmeApp, waitFor } from './setup.js';

test('first issuance: Pebble validates HTTP-01 and its certificate reaches STARTTLS, an attached tls.Server and the data directory', async (t) => {
  const world = await acmeWorld(t);
  const app = await startAcmeApp(t, world);
  t.true(app.app.acme.enabled);

  // A TLS server built from the source before the certificate exists (as IMAPS is), and an SMTP
  // session already under TLS with the self-signed certificate: both must survive the swap.
  const implicit = createTlsServer(app.app.tls.serverOptions(), (socket) => socket.end('hello\r\n'));
  t.teardown(app.app.tls.attach(implicit));
  implicit.listen(0, '127.0.0.1');
  await once(implicit, 'listening');
  t.teardown(() => implicit.close());
  const before = await startTls(app.smtpPort, HOSTNAME);
  t.teardown(() => before.close());

  await waitFor('the ACME certificate in force', () => app.app.tls.current().source === 'acme');
  const issued = leafOf(app.app.tls.current().cert);
  const intermediate = leafOf(await world.pebble.intermediate());

  for (const servername of [HOSTNAME, undefined]) {
    const chain = await starttlsChain(app.smtpPort, servername);
    t.is(chain.fingerprint, issued.fingerprint, `STARTTLS with SNI ${servername}`);
    t.is(chain.subjectAltName, `DNS:${HOSTNAME}`);
    t.regex(chain.issuerCN, /^Pebble Intermediate CA/);
    t.is(chain.issuerFingerprint, intermediate.fingerprint, 'the full chain is served');
  }
  const port = (implicit.address() as { port: number }).port;
  const direct = tlsConnect({ port, host: '127.0.0.1', servername: HOSTNAME, rejectUnauthorized: false });
  await once(direct, 'secureConnect');
  t.is(direct.getPeerCertificate().fingerprint256, issued.fingerprint, 'the attached tls.Server');
  direct.destroy();

  // The session opened before the swap keeps its certificate and still works.
  t.not(before.fingerprint, issued.fingerprint);
  t.regex(await before.command('NOOP'), /^250 /);

  // Stored: account key, chain and key, keys readable by the owner only.
  const dir = join(app.dataDir, 'tls', 'acme');
  t.is(statSync(join(dir, 'account.key')).mode & 0o777, 0o600);
  t.is(statSync(join(dir, 'key.pem')).mode & 0o777, 0o600);
  t.is(leafOf(readFileSync(join(dir, 'cert.pem'))).fingerprint, issued.fingerprint);
  t.is((readFileSync(join(dir, 'cert.pem'), 'latin1').match(/BEGIN CERTIFICATE/g) ?? []).length, 2, 'leaf and intermediate');

  // Renewal is set for 30 days before expiry; nothing failed; no challenge left published.
  const status = app.app.acme.status();
  t.is(status.attempts, 1);
  t.is(status.failures, 0);
  t.is(status.nextAttemptAt, issued.validTo - 30 * DAY_MS);
  t.is(app.app.acme.challenges.size(), 0);

  // The expiry metric follows the source in force.
  const metrics = await (await fetch(`http://127.0.0.1:${app.httpPort}/metrics`)).text();
  const line = /^mailstead_tls_certificate_expiry_seconds\{source="acme"\} (\d+)$/m.exec(metrics);
  t.truthy(line, metrics.split('\n').filter((l) => l.includes('tls_certificate')).join('\n'));
  t.true(Math.abs(Number(line![1]) - (issued.validTo - Date.now()) / 1000) < 120);
  t.false(metrics.includes('mailstead_tls_certificate_expiry_seconds{source="self-signed"}'));
});

test('the HTTP-01 path answers 404 for an unknown token, without a key, outside /api', async (t) => {
  const world = await acmeWorld(t);
  const app = await startAcmeApp(t, world);
  for (const path of ['/.well-known/acme-challenge/unknown-token', '/.well-known/acme-challenge/', '/.well-known/acme-challenge/a/b']) {
    const res = await fetch(`http://127.0.0.1:${app.httpPort}${path}`);
    t.is(res.status, 404, path);
    t.is(((await res.json()) as { status: string }).status, 'error');
  }
  const post = await fetch(`http://127.0.0.1:${app.httpPort}/.well-known/acme-challenge/x`, { method: 'POST' });
  t.is(post.status, 405);
  await post.arrayBuffer();
  // A published token is answered with its key authorization, byte for byte.
  app.app.acme.challenges.set('tok_en-1', 'tok_en-1.thumbprint');
  const res = await fetch(`http://127.0.0.1:${app.httpPort}/.well-known/acme-challenge/tok_en-1`);
  t.is(res.status, 200);
  t.is(await res.text(), 'tok_en-1.thumbprint');
  app.app.acme.challenges.remove('tok_en-1');
  const gone = await fetch(`http://127.0.0.1:${app.httpPort}/.well-known/acme-challenge/tok_en-1`);
  t.is(gone.status, 404);
  await gone.arrayBuffer();
});
