import type { Core } from '../core.js';
import { domainRoutes } from './routes.js';
import { createDomainService } from './service.js';
import { createDomainStore } from './store.js';
import type { Db } from '../db/connection.js';
import { addMissingRecords, domainTasks } from './tasks.js';

/** Wires the domains capability: store, service, task handlers and routes. */
export function installDomains(core: Core) {
  const store = createDomainStore();
  const service = createDomainService({ db: core.db, store, queue: core.queue, tenants: core.tenants, clock: core.clock });
  core.queue.register(...domainTasks({ store, config: core.config }));
  domainRoutes({ registry: core.registry, domains: service, queue: core.queue });
  return {
    store,
    service,
    /** Adds the planned records a hostname provisioned by an older version lacks (DNS checks call it). */
    addMissingRecords: (db: Db, domainId: number) => addMissingRecords(db, store, core.config, domainId),
  };
}
