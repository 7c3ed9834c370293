import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { acmeWorld, BACKOFF_FIRST_MS, DAY_MS, HOSTNAME, leafOf, looksAgain, startAcmeApp, starttlsChain, waitFor } from './setup.js';

test('renewal: no order while more than 30 days remain; within 30 days a new certificate is ordered, stored and served without a restart', async (t) => {
  const world = await acmeWorld(t);
  const clock = manualClock(Date.now());
  const app = await startAcmeApp(t, world, { clock });
  await waitFor('the first certificate', () => app.app.tls.current().source === 'acme');
  const first = leafOf(app.app.tls.current().cert);
  const firstKey = app.app.tls.current().key;
  t.is(app.app.acme.status().nextAttemptAt, first.validTo - 30 * DAY_MS);

  // 31 days before expiry: the schedule looks at the clock every 50 ms and must leave it alone.
  clock.set(first.validTo - 31 * DAY_MS);
  await looksAgain(app.app.acme);
  t.is(app.app.acme.status().attempts, 1);
  t.is((await starttlsChain(app.smtpPort, HOSTNAME)).fingerprint, first.fingerprint);

  // 29 days before expiry: renewed.
  clock.set(first.validTo - 29 * DAY_MS);
  await waitFor('the renewed certificate', () => leafOf(app.app.tls.current().cert).fingerprint !== first.fingerprint);
  const renewed = leafOf(app.app.tls.current().cert);
  t.is(app.app.tls.current().source, 'acme');
  t.is(app.app.acme.status().attempts, 2);
  t.is(app.app.acme.status().failures, 0);
  // Pebble dates certificates by the real clock, so the renewed one is due as well by the moved
  // clock: the schedule still waits a backoff step rather than ordering again at once.
  t.is(app.app.acme.status().nextAttemptAt, clock.now() + BACKOFF_FIRST_MS);
  await looksAgain(app.app.acme);
  t.is(app.app.acme.status().attempts, 2);
  const served = await starttlsChain(app.smtpPort, HOSTNAME);
  t.is(served.fingerprint, renewed.fingerprint);
  t.regex(served.issuerCN, /^Pebble Intermediate CA/);
  t.is((await starttlsChain(app.smtpPort)).fingerprint, renewed.fingerprint, 'without SNI');
  t.is(leafOf(readFileSync(join(app.dataDir, 'tls', 'acme', 'cert.pem'))).fingerprint, renewed.fingerprint);
  // A new key with every certificate, and it is the one in force.
  t.true(readFileSync(join(app.dataDir, 'tls', 'acme', 'key.pem')).equals(app.app.tls.current().key));
  t.false(app.app.tls.current().key.equals(firstKey));
});
