import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { CertificateSource } from '../tls/index.js';
import { filesConfigured } from '../tls/files.js';
import { leafCertificate } from '../tls/pair.js';
import { createChallengeResponder, type ChallengeResponder } from './challenge.js';
import { createRenewalSchedule, DEFAULT_POLICY, type RenewalPolicy, type ScheduleStatus, type Validity } from './schedule.js';
import { loadCertificate, loadOrCreateAccountKey, saveCertificate } from './store.js';

/** Knobs for tests only (createApp options, never environment variables). */
export interface AcmeTestOptions {
  /** PEM of a CA that signs the directory's HTTPS certificate (Pebble's), trusted besides Node's roots. */
  directoryCa?: string | Buffer;
  /** The clock of renewal and backoff (default: the app's). */
  clock?: Clock;
  /** Overrides of the renewal policy (backoff, how often the clock is looked at). */
  policy?: Partial<RenewalPolicy>;
  /** First wait between polls of a pending authorization or order. */
  pollMinMs?: number;
  /** acme-client's retries of a request that got no answer (process-wide; default 5, 5 s apart and growing). */
  requestRetries?: { attempts: number; delaySeconds: number };
}

function validityOf(chain: Buffer): Validity {
  const leaf = leafCertificate(chain);
  return { validFrom: new Date(leaf.validFrom).getTime(), validTo: new Date(leaf.validTo).getTime() };
}

/** How long stop() waits for an order in progress before leaving it behind (it installs nothing then). */
const STOP_WAIT_MS = 10_000;

export interface Acme {
  /** Whether ACME manages the certificate (MAILSTEAD_ACME_EMAIL set and no certificate files). */
  enabled: boolean;
  /** The HTTP-01 responder mounted on the HTTP listener (answers 404 while nothing is pending). */
  challenges: ChallengeResponder;
  /** Starts ordering/renewing; call once the HTTP listener is up, since the CA validates through it. */
  start(): void;
  stop(): Promise<void>;
  status(): ScheduleStatus & { enabled: boolean };
}

/**
 * ACME (RFC 8555, DECISIONS.md section 15) as the second source of certificates: reuses the stored
 * certificate when it still serves MAILSTEAD_HOSTNAME (installing it before any listener opens),
 * else lets the self-signed one serve until the first order completes; every new certificate is
 * stored and swapped into every TLS listener through `tls.install`.
 */
export async function installAcme(opts: { config: Config; logger: Logger; clock: Clock; tls: CertificateSource; test?: AcmeTestOptions }): Promise<Acme> {
  const { config, tls } = opts;
  const logger = opts.logger.child({ component: 'acme' });
  const clock = opts.test?.clock ?? opts.clock;
  const challenges = createChallengeResponder();

  if (!config.acmeEmail || filesConfigured(config)) {
    if (config.acmeEmail) logger.info('MAILSTEAD_ACME_EMAIL is ignored: MAILSTEAD_TLS_CERT/KEY take precedence');
    const off: ScheduleStatus = { attempts: 0, failures: 0, nextAttemptAt: null, lastError: null, running: false, looks: 0 };
    return { enabled: false, challenges, start() {}, async stop() {}, status: () => ({ ...off, enabled: false }) };
  }
  const email = config.acmeEmail;
  // Loaded only when ACME is on: acme-client brings axios, node-forge and an ASN.1 stack that every
  // other start (and every CLI call) need not parse.
  const { orderCertificate, setRequestRetries, trustDirectoryCa } = await import('./client.js');
  if (opts.test?.directoryCa) trustDirectoryCa(opts.test.directoryCa);
  if (opts.test?.requestRetries) setRequestRetries(opts.test.requestRetries.attempts, opts.test.requestRetries.delaySeconds);

  const account = await loadOrCreateAccountKey(config.dataDir);
  const stored = await loadCertificate(config.dataDir, config.hostname, clock.now());
  if (stored.usable) {
    tls.install(stored.pair, 'acme');
    logger.info({ valid_to: new Date(stored.validTo).toISOString() }, 'acme certificate reused from the data directory');
  } else {
    logger.info({ reason: stored.why, account_key_created: account.created }, 'no usable acme certificate yet; the self-signed one serves until the first order completes');
  }

  let stopped = false;
  const schedule = createRenewalSchedule({
    clock,
    logger,
    policy: { ...DEFAULT_POLICY, ...opts.test?.policy },
    validity: () => {
      const now = tls.current();
      return now.source === 'acme' ? validityOf(now.cert) : null;
    },
    async order() {
      const pair = await orderCertificate({
        directoryUrl: config.acmeDirectory, email, hostname: config.hostname, accountKey: account.key,
        challenges, logger, pollMinMs: opts.test?.pollMinMs,
      });
      if (stopped) throw new Error('stopped while the order was in progress');
      // Stored first, so a restart right after reuses it; install validates, and a pair it refuses
      // (the old one keeps serving) is refused again by loadCertificate at the next start.
      await saveCertificate(config.dataDir, pair);
      tls.install(pair, 'acme');
      return validityOf(pair.cert);
    },
  });

  return {
    enabled: true,
    challenges,
    start: () => schedule.start(),
    async stop() {
      stopped = true;
      let deadline: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => { deadline = setTimeout(resolve, STOP_WAIT_MS); deadline.unref(); });
      await Promise.race([schedule.stop(), late]);
      clearTimeout(deadline);
    },
    status: () => ({ ...schedule.status(), enabled: true }),
  };
}
