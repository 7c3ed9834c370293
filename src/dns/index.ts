import type { Core } from '../core.js';
import type { installDomains } from '../domains/index.js';
import { createDnsChecker } from './checker.js';
import { createResolver, DEFAULT_RESOLVER_OPTIONS } from './resolver.js';
import { dnsRoutes } from './routes.js';
import { createDnsService } from './service.js';
import { createDnsStore } from './store.js';
import { dnsTasks } from './tasks.js';

/** The cron job's name (tests and admin can run it with `core.cron.run`). */
export const DNS_CRON_JOB = 'dns.checks';

/**
 * Wires the DNS verification loop: the `domain.check` task, `POST /v1/domains/{domain}/check`,
 * and a once-a-minute cron job that only enqueues the checks that are due.
 */
export function installDns(core: Core, { domains }: { domains: ReturnType<typeof installDomains> }) {
  const store = createDnsStore();
  const checker = createDnsChecker({
    db: core.db, store, clock: core.clock, logger: core.logger.child({ capability: 'dns' }),
    queries: createResolver({ servers: core.config.dnsServers, ...DEFAULT_RESOLVER_OPTIONS }),
    recordsView: domains.store.records,
    addMissingRecords: (db, domainId) => domains.addMissingRecords(db, domainId),
  });
  const service = createDnsService({
    db: core.db, store, domainStore: domains.store, queue: core.queue, clock: core.clock, logger: core.logger,
    failureStreak: checker.failureStreak,
  });
  core.queue.register(...dnsTasks({ checker }));
  dnsRoutes({ registry: core.registry, dns: service });
  core.cron.add({ name: DNS_CRON_JOB, schedule: '* * * * *', run: () => service.enqueueDue() });
  return { store, checker, service };
}
