import { unprocessable } from '../errors.js';
import type { TaskHandler } from '../tasks/types.js';
import { inconclusiveReason, type DnsChecker, type Observed } from './checker.js';
import { CHECK_KIND } from './store.js';

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
