import { unprocessable } from '../errors.js';
import type { TaskHandler } from '../tasks/types.js';
import { inconclusiveReason, type DnsChecker, type Observed } from './checker.js';
import { CHECK_KIND } from './store.js';

/** The task lane of DNS checks (their own worker slots, see TaskHandler.lane). */
export const DNS_LANE = 'dns';
/** Checks at once: they wait on DNS, not on the CPU, and the scheduler enqueues up to 25 a minute. */
export const DNS_CHECK_SLOTS = 8;

/** Where a check came from; kept in the payload for the logs. */
interface Payload { origin: 'api' | 'schedule' }

/**
 * `domain.check`: one hostname's DNS check. `prepare` asks DNS outside any transaction; an
 * inconclusive answer (timeout, SERVFAIL, ...) stamps `last_checked_at`, changes nothing else and
 * fails the task with the reason, so an on-demand check's poll says why (422). `run` writes the
 * statuses and completes with `{domain, status, records}`, the shape of the domain-create results.
 */
export function dnsTasks({ checker }: { checker: DnsChecker }): TaskHandler<Payload, Observed | null>[] {
  return [{
    kind: CHECK_KIND,
    // A zone whose servers do not answer holds its slot for the resolver's timeouts.
    lane: DNS_LANE,
    async prepare(task) {
      const observed = await checker.observe(task.domain);
      if (observed?.inconclusive) {
        await checker.markInconclusive(observed);
        throw unprocessable(inconclusiveReason(task.domain, observed.inconclusive));
      }
      return observed;
    },
    async run(trx, task, observed) {
      const result = observed ? await checker.apply(trx, observed) : { domain: task.domain, status: 'deleted', records: [] };
      return { totalEmail: 0, results: result };
    },
  }];
}
