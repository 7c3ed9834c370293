import { Counter, type Registry } from 'prom-client';
import type { VerdictCounts } from './filing.js';

/** One counter per metrics registry (one per app), made on first use. */
const counters = new WeakMap<Registry, Counter<'result'>>();

function counterOf(registry: Registry): Counter<'result'> {
  let c = counters.get(registry);
  if (!c) {
    c = new Counter({
      name: 'mailstead_spam_verdicts_total', help: 'Spam verdicts by result (ham, junk; rejected: refused before the 250)',
      labelNames: ['result'] as const, registers: [registry],
    });
    for (const result of ['ham', 'junk', 'rejected']) c.inc({ result }, 0);
    counters.set(registry, c);
  }
  return c;
}

/**
 * Counts verdicts in /metrics (DECISIONS.md section 18). `rejected` is for the SMTP side: a message
 * refused before the 250 (DMARC p=reject, an rspamd reject) counts there.
 */
export function countSpamVerdict(registry: Registry, result: 'ham' | 'junk' | 'rejected', n = 1): void {
  if (n > 0) counterOf(registry).inc({ result }, n);
}

/** Counts a stored batch's verdicts. */
export function countStoredVerdicts(registry: Registry, v: VerdictCounts): void {
  countSpamVerdict(registry, 'ham', v.ham);
  countSpamVerdict(registry, 'junk', v.junk);
}

/** Makes the counter show (all results at 0) before any mail arrives. */
export const registerSpamMetrics = (registry: Registry): void => { counterOf(registry); };
