import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { notFound } from '../errors.js';
import type { Logger } from '../logger.js';
import { normalizeHostname } from '../message/hostname.js';
import type { DomainStore } from '../domains/store.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { ApiKey } from '../tenants/service.js';
import { DEFAULT_SCHEDULE, pickDue, type CheckSchedule } from './schedule.js';
import { CHECK_KIND, type DnsStore } from './store.js';

/** How much checking the schedule may put on the shared worker. */
export interface CheckLimits {
  /** Checks enqueued by one cron tick at most. */
  perTick: number;
  /** Scheduled and on-demand checks queued or running at once at most; a tick tops up to this. */
  maxOpen: number;
  /**
   * When this many checks in a row could not conclude (the resolver is down or unreachable), a
   * tick enqueues a single probe instead of a batch, until a check concludes again.
   */
  failureStreak: number;
}

/**
 * Defaults: 25 a minute is 36,000 checks a day, far above one box's hostnames. Checks share the
 * task worker with provisioning; in a resolver outage every check waits for its timeout, so the
 * caps and the probe mode keep them from holding the worker's slots.
 */
export const DEFAULT_LIMITS: Readonly<CheckLimits> = Object.freeze({ perTick: 25, maxOpen: 25, failureStreak: 5 });

/** The rules of the DNS verification loop: on-demand checks and the scheduler's enqueueing. */
export function createDnsService(deps: {
  db: Db; store: DnsStore; domainStore: DomainStore; queue: TaskQueue; clock: Clock; logger: Logger;
  /** How many checks in a row were inconclusive (the checker counts). */
  failureStreak: () => number;
  schedule?: CheckSchedule; limits?: CheckLimits;
}) {
  const { db, store, domainStore, queue, clock, logger } = deps;
  const schedule = deps.schedule ?? DEFAULT_SCHEDULE;
  const limits = deps.limits ?? DEFAULT_LIMITS;

  return {
    /**
     * Enqueues an immediate check of one of the tenant's hostnames (404 for any other). A check
     * this key already queued and that has not started is answered instead of queueing another.
     */
    async requestCheck(key: ApiKey, hostname: string): Promise<{ taskId: number; domain: string }> {
      const host = normalizeHostname(hostname);
      return db.transaction().execute(async (trx) => {
        if (!(await domainStore.ownedByHostname(trx, key.tenantId, host))) throw notFound('Domain not found');
        const queued = await store.queuedCheckOf(trx, key.id, host);
        const taskId = queued ?? await queue.enqueue(trx, {
          kind: CHECK_KIND, tenantId: key.tenantId, keyId: key.id, domain: host, payload: { origin: 'api' },
        });
        return { taskId, domain: host };
      });
    },

    /**
     * The cron job's whole work: enqueues a check for each hostname due at the clock's now (see
     * schedule.ts), skipping hostnames with a check already open, within `limits`. Returns the
     * hostnames enqueued.
     */
    async enqueueDue(): Promise<string[]> {
      const now = clock.now();
      const picked = await db.transaction().execute(async (trx) => {
        const busy = await store.busyHostnames(trx);
        const resolverDown = limits.failureStreak > 0 && deps.failureStreak() >= limits.failureStreak;
        const budget = Math.min(resolverDown ? 1 : limits.perTick, limits.maxOpen - busy.size);
        if (budget <= 0) return [];
        const rows = await store.candidates(trx, now, schedule, Math.min(1000, (budget + busy.size) * 4));
        const due = pickDue(rows, now, { limit: budget, busy, schedule });
        for (const d of due) {
          await queue.enqueue(trx, { kind: CHECK_KIND, tenantId: d.tenantId, keyId: null, domain: d.hostname, payload: { origin: 'schedule' } });
        }
        return due.map((d) => d.hostname);
      });
      if (picked.length > 0) logger.debug({ count: picked.length }, 'DNS checks enqueued');
      return picked;
    },
  };
}
export type DnsService = ReturnType<typeof createDnsService>;
