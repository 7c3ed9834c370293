import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { acmeWorld, BACKOFF_FIRST_MS, HOSTNAME, leafOf, looksAgain, startAcmeApp, starttlsChain, waitFor } from './setup.js';

test('a refused order keeps the self-signed certificate serving and is retried with a doubling backoff until it succeeds', async (t) => {
  const world = await acmeWorld(t);
  // Pebble's validator is sent to an address where nothing listens: it refuses the challenge.
  world.pointHostnameAt('127.0.0.2');
  const clock = manualClock(Date.now());
  const app = await startAcmeApp(t, world, { clock });
  const selfSigned = leafOf(readFileSync(join(app.dataDir, 'tls', 'self-signed.crt')));

  await waitFor('the first failure', () => app.app.acme.status().failures === 1);
  let status = app.app.acme.status();
  t.is(status.attempts, 1);
  t.is(status.nextAttemptAt, clock.now() + BACKOFF_FIRST_MS);
  t.truthy(status.lastError);
  t.is(app.app.tls.current().source, 'self-signed');
  t.is((await starttlsChain(app.smtpPort, HOSTNAME)).fingerprint, selfSigned.fingerprint);
  t.is(app.app.acme.challenges.size(), 0, 'the failed challenge is no longer published');

  // Nothing happens before the backoff has passed.
  clock.advance(BACKOFF_FIRST_MS - 1000);
  await looksAgain(app.app.acme);
  t.is(app.app.acme.status().attempts, 1);

  // The second failure waits twice as long.
  clock.advance(1000);
  await waitFor('the second failure', () => app.app.acme.status().failures === 2);
  status = app.app.acme.status();
  t.is(status.attempts, 2);
  t.is(status.nextAttemptAt, clock.now() + 2 * BACKOFF_FIRST_MS);
  t.is((await starttlsChain(app.smtpPort)).fingerprint, selfSigned.fingerprint);

  // Once Pebble can reach us, the next retry gets the certificate.
  world.pointHostnameAt('127.0.0.1');
  clock.advance(2 * BACKOFF_FIRST_MS);
  await waitFor('the certificate after the retries', () => app.app.tls.current().source === 'acme');
  status = app.app.acme.status();
  t.is(status.attempts, 3);
  t.is(status.failures, 0);
  t.is(status.lastError, null);
  const chain = await starttlsChain(app.smtpPort, HOSTNAME);
  t.regex(chain.issuerCN, /^Pebble Intermediate CA/);
  t.is(chain.subjectAltName, `DNS:${HOSTNAME}`);
});

test('an unreachable directory is a failed order too: the self-signed certificate serves and a retry is scheduled', async (t) => {
  const world = await acmeWorld(t);
  const clock = manualClock(Date.now());
  // Port 1 on loopback refuses at once.
  const app = await startAcmeApp(t, world, { clock, env: { MAILSTEAD_ACME_DIRECTORY: 'https://127.0.0.1:1/dir' } });
  await waitFor('the failure', () => app.app.acme.status().failures === 1);
  const status = app.app.acme.status();
  t.is(status.nextAttemptAt, clock.now() + BACKOFF_FIRST_MS);
  t.regex(status.lastError ?? '', /no answer from the ACME directory https:\/\/127\.0\.0\.1:1\/dir/);
  t.is(app.app.tls.current().source, 'self-signed');
});
