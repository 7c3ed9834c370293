import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/connection.js';
import { iso } from '../format.js';
import type { RouteRegistry } from '../http/registry.js';
import { setAsideRoutes } from '../set-aside/routes.js';
import { SET_ASIDE_LIST_MAX, type SetAsideQueue } from '../set-aside/queue.js';
import { SET_ASIDE_ERROR } from './queue.js';
import { createTaskStore, type TaskStore } from './store.js';

/**
 * Tasks set aside: failed with SET_ASIDE_ERROR after their retries ran out or when their outcome
 * could not be written (queue.ts). Listed without their payloads (a mailbox task carries its
 * password). A retry queues one due now; it keeps its count of attempts, so it gets one more try
 * before it is set aside again. A discard deletes it (its poll then answers 404).
 */
export function createTaskSetAside(deps: {
  db: Db; store: TaskStore; now: () => number;
  /** Tells the queue (every node's, on PostgreSQL) that a task is due now. */
  wake: () => Promise<void> | void;
}): SetAsideQueue {
  const { db, store } = deps;
  return {
    async list(limit = SET_ASIDE_LIST_MAX) {
      const rows = await store.failedWith(db, SET_ASIDE_ERROR, { limit });
      return rows.map((r) => ({
        id: r.id, kind: r.kind, tenant_id: r.tenant_id, domain: r.domain, attempts: r.attempts, reason: r.error,
        created_at: iso(r.created_at), set_aside_at: r.finished_at === null ? null : iso(r.finished_at),
      }));
    },
    count: () => store.countFailedWith(db, SET_ASIDE_ERROR),
    async retry(id) {
      const queued = await store.requeueFailedWith(db, id, SET_ASIDE_ERROR, deps.now());
      if (queued) await deps.wake();
      return queued;
    },
    discard: (id) => store.removeFailedWith(db, id, SET_ASIDE_ERROR),
  };
}

/** Tasks set aside as the operator sees them: the admin routes and the `mailstead_tasks_set_aside` gauge. */
export function installTaskSetAside(o: { db: Db; now: () => number; queue: { wake(): unknown }; routes: RouteRegistry; metrics: Registry }): SetAsideQueue {
  const setAside = createTaskSetAside({ db: o.db, store: createTaskStore(), now: o.now, wake: () => { o.queue.wake(); } });
  setAsideRoutes({ registry: o.routes, base: '/v1/set-aside/tasks', what: 'tasks', queue: setAside });
  new Gauge({
    name: 'mailstead_tasks_set_aside', help: 'Tasks set aside (failed) after their retries ran out (mailstead set-aside list tasks)', registers: [o.metrics],
    async collect() { this.set(await setAside.count()); },
  });
  return setAside;
}
