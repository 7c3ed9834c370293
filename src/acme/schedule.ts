import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';

/** When orders happen: renewal margin, retry backoff, and how often the clock is looked at. */
export interface RenewalPolicy {
  /** A certificate is renewed this long before it expires (DECISIONS.md section 15: 30 days). */
  renewBeforeMs: number;
  /** The wait after the first failed order; it doubles with each further failure... */
  backoffFirstMs: number;
  /** ...up to this. */
  backoffMaxMs: number;
  /** The longest sleep between two looks at the clock, so a suspended host or a moved clock is noticed. */
  checkEveryMs: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/**
 * Production policy. Let's Encrypt allows 5 failed validations per hostname and hour; 5 minutes
 * doubling stays under that from the start and settles at twice a day while something stays broken.
 */
export const DEFAULT_POLICY: RenewalPolicy = { renewBeforeMs: 30 * DAY, backoffFirstMs: 5 * MINUTE, backoffMaxMs: 12 * 60 * MINUTE, checkEveryMs: 60 * MINUTE };

/** The validity of a certificate, in ms since the epoch. */
export interface Validity {
  validFrom: number;
  validTo: number;
}

/**
 * When a certificate is to be renewed: `renewBeforeMs` before it expires, or, for a certificate
 * whose whole life is shorter than three times that (a CA's short-lived profile), when a third of
 * its life remains, as certbot does; otherwise every such certificate would be due as it arrives.
 */
export function renewalDueAt(cert: Validity, policy: Pick<RenewalPolicy, 'renewBeforeMs'>): number {
  const lifetime = Math.max(cert.validTo - cert.validFrom, 0);
  return cert.validTo - Math.min(policy.renewBeforeMs, lifetime / 3);
}

/** The wait after the `failures`-th failure in a row (1 is the first). */
export function backoffDelay(failures: number, policy: Pick<RenewalPolicy, 'backoffFirstMs' | 'backoffMaxMs'>): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30); // 2^30 already exceeds any sane maximum
  return Math.min(policy.backoffFirstMs * 2 ** exponent, policy.backoffMaxMs);
}

/** What the schedule has done so far; for logs, tests and operators. */
export interface ScheduleStatus {
  /** Orders started since the process began. */
  attempts: number;
  /** Failed orders in a row (0 after a success). */
  failures: number;
  /** When the next order is due (ms since the epoch by the schedule's clock); null when stopped. */
  nextAttemptAt: number | null;
  lastError: string | null;
  /** An order is in progress now. */
  running: boolean;
  /** Times the schedule has looked at the clock and decided (a test waits for one more look instead of a sleep). */
  looks: number;
}

/**
 * Runs `order` whenever a certificate is due: at once when there is none (`validity()` null), else
 * `renewBeforeMs` before it expires (see renewalDueAt); a failure is retried after a doubling backoff while whatever
 * serves now keeps serving. Time comes from `clock`, so tests can move it; real timers only decide
 * how soon the clock is looked at again.
 */
export function createRenewalSchedule(opts: {
  clock: Clock;
  policy: RenewalPolicy;
  logger: Logger;
  /** Validity of the certificate ACME has in force, or null when it has none. */
  validity: () => Validity | null;
  /** Orders and installs a certificate; resolves with its validity. */
  order: () => Promise<Validity>;
}) {
  const { clock, policy, logger } = opts;
  const status: ScheduleStatus = { attempts: 0, failures: 0, nextAttemptAt: null, lastError: null, running: false, looks: 0 };
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let stopped = true;

  function dueFromCertificate(): number {
    const validity = opts.validity();
    return validity === null ? clock.now() : renewalDueAt(validity, policy);
  }

  function arm(): void {
    if (stopped || status.nextAttemptAt === null) return;
    const wait = Math.min(Math.max(status.nextAttemptAt - clock.now(), 0), policy.checkEveryMs);
    timer = setTimeout(tick, wait);
    timer.unref();
  }

  function tick(): void {
    timer = null;
    if (stopped) return;
    status.looks += 1;
    if (status.nextAttemptAt !== null && clock.now() >= status.nextAttemptAt) {
      inFlight = attempt().finally(() => { inFlight = null; arm(); });
      return;
    }
    arm();
  }

  async function attempt(): Promise<void> {
    status.attempts += 1;
    status.running = true;
    logger.info({ attempt: status.attempts, failures: status.failures }, 'acme order started');
    try {
      const validity = await opts.order();
      status.failures = 0;
      status.lastError = null;
      // Never sooner than a first retry would be: a clock far ahead of the CA's (or a CA issuing
      // certificates already due) must not turn into a stream of orders.
      status.nextAttemptAt = Math.max(renewalDueAt(validity, policy), clock.now() + policy.backoffFirstMs);
      logger.info({ valid_to: new Date(validity.validTo).toISOString(), renew_at: new Date(status.nextAttemptAt).toISOString() }, 'acme certificate issued');
    } catch (err) {
      status.failures += 1;
      status.lastError = (err as Error).message;
      const delay = backoffDelay(status.failures, policy);
      status.nextAttemptAt = clock.now() + delay;
      logger.error({ err, failures: status.failures, retry_in_seconds: Math.round(delay / 1000), retry_at: new Date(status.nextAttemptAt).toISOString() },
        'acme order failed; the certificate in force keeps serving');
    } finally {
      status.running = false;
    }
  }

  return {
    /** Looks at the certificate in force and orders when due (at once when there is none). */
    start(): void {
      if (!stopped) return;
      stopped = false;
      status.nextAttemptAt = dueFromCertificate();
      logger.info({ next_order_at: new Date(status.nextAttemptAt).toISOString() }, 'acme renewal scheduled');
      arm();
    },
    /** Stops the timer and waits for an order in progress to end. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await inFlight;
      status.nextAttemptAt = null;
    },
    status: (): ScheduleStatus => ({ ...status }),
  };
}
export type RenewalSchedule = ReturnType<typeof createRenewalSchedule>;
