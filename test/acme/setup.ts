import { X509Certificate } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import type { AcmeTestOptions } from '../../src/acme/index.js';
import type { Clock } from '../../src/clock.js';
import { startTestApp, TEST_ENV } from '../helpers/app.js';
import { startDnsServer } from '../helpers/webhooks.js';
import { startTls } from '../tls/starttls.js';
import { fixedPort } from '../helpers/ports.js';
import { startPebble, type Pebble } from './pebble.js';
import { poll } from '../helpers/poll.js';

export const HOSTNAME = TEST_ENV.MAILSTEAD_HOSTNAME;
export const DAY_MS = 24 * 3600 * 1000;
/** The backoff the tests run with: the first retry a minute after a failure, doubling. */
export const BACKOFF_FIRST_MS = 60_000;

/**
 * What an ACME test needs around the server: a DNS server that answers MAILSTEAD_HOSTNAME with
 * `answer` (127.0.0.1: Pebble reaches our HTTP listener), the HTTP port the server will listen on
 * (Pebble validates HTTP-01 there), and Pebble itself.
 */
export async function acmeWorld(t: ExecutionContext) {
  let answer: string | null = '127.0.0.1';
  const dns = await startDnsServer(t, (name) => (name.toLowerCase().replace(/\.$/, '') === HOSTNAME ? answer : null));
  const httpPort = await fixedPort();
  const pebble = await startPebble(t, { httpPort, dnsServer: dns.server });
  return {
    pebble,
    httpPort,
    /** Changes where MAILSTEAD_HOSTNAME points for Pebble's validation (null: no A record). */
    pointHostnameAt(address: string | null) { answer = address; },
  };
}
export type AcmeWorld = Awaited<ReturnType<typeof acmeWorld>>;

/** The test knobs of an ACME server: Pebble's CA, a clock, short polls and a 50 ms look at the clock. */
export function acmeOptions(pebble: Pebble, clock?: Clock): AcmeTestOptions {
  return { directoryCa: pebble.ca, clock, pollMinMs: 100, requestRetries: { attempts: 2, delaySeconds: 0 }, policy: { checkEveryMs: 50, backoffFirstMs: BACKOFF_FIRST_MS, backoffMaxMs: 16 * BACKOFF_FIRST_MS } };
}

/** Starts the server with ACME on against the world's Pebble, its HTTP listener on the world's port. */
export function startAcmeApp(t: ExecutionContext, world: AcmeWorld, opts: { clock?: Clock; dataDir?: string; env?: Record<string, string> } = {}) {
  return startTestApp(t, {
    dataDir: opts.dataDir,
    env: {
      MAILSTEAD_HTTP_PORT: String(world.httpPort),
      MAILSTEAD_ACME_EMAIL: 'postmaster@example.org',
      MAILSTEAD_ACME_DIRECTORY: world.pebble.directoryUrl,
      ...opts.env,
    },
    acme: acmeOptions(world.pebble, opts.clock),
  });
}

/** Polls `check` every 50 ms until it returns true; fails after `timeoutMs` with `what`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  await poll(what, check, { timeoutMs });
}

/**
 * Waits until the renewal schedule has looked at the clock `times` more times since the call: what
 * it decided at those looks is in its status afterwards (instead of sleeping and hoping it looked).
 */
export async function looksAgain(acme: { status(): { looks: number } }, times = 2): Promise<void> {
  const from = acme.status().looks;
  await waitFor(`${times} more looks at the clock`, () => acme.status().looks >= from + times);
}

/** The chain a fresh STARTTLS handshake presents: leaf and its issuer as the client saw them. */
export async function starttlsChain(port: number, servername?: string) {
  const session = await startTls(port, servername);
  try {
    const peer = session.socket.getPeerCertificate(true);
    return {
      fingerprint: peer.fingerprint256,
      subjectAltName: peer.subjectaltname,
      issuerCN: String(peer.issuer.CN),
      /** The second certificate sent (the intermediate), when the server sent the chain. */
      issuerFingerprint: peer.issuerCertificate && peer.issuerCertificate !== peer ? peer.issuerCertificate.fingerprint256 : null,
    };
  } finally {
    session.close();
  }
}

/** SHA-256 fingerprint and expiry of the leaf of a PEM chain. */
export function leafOf(pem: string | Buffer): { fingerprint: string; validTo: number; subjectCN: string; issuer: string } {
  const leaf = new X509Certificate(pem);
  return { fingerprint: leaf.fingerprint256, validTo: new Date(leaf.validTo).getTime(), subjectCN: leaf.subject, issuer: leaf.issuer };
}
