import { Counter, Gauge } from 'prom-client';
import type { Core } from '../core.js';
import { postgresDeliveryClaims } from './postgres/claims.js';
import { sqliteDeliveryClaims } from './sqlite/claims.js';
import { createDeliveryStore } from './delivery-store.js';
import { createDeliveryEngine, PER_WEBHOOK_CONCURRENCY, type EngineOptions } from './engine.js';
import { createEventRecorder, listenQueued } from './events.js';
import { webhookJobs } from './jobs.js';
import { createHostLookup, type HostLookup } from './resolve.js';
import { webhookRoutes } from './routes.js';
import { createSender } from './sender.js';
import { createWebhookService } from './service.js';
import { createWebhookStore } from './store.js';
import { createWebhookSetAside } from './set-aside.js';
import { setAsideRoutes } from '../set-aside/routes.js';

/** What installWebhooks may be given: another DNS lookup, engine tuning (benchmarks). */
export interface WebhookOptions {
  lookup?: HostLookup;
  engine?: EngineOptions;
}

/**
 * Wires the webhooks capability: the event recorder other capabilities record through (fan-out
 * into deliveries in their transaction), the delivery engine with its SSRF-guarded sender, the
 * cron jobs and the routes. `start`/`stop` run the engine with the app.
 */
export function installWebhooks(core: Core, opts: WebhookOptions = {}) {
  const store = createWebhookStore();
  const deliveries = createDeliveryStore();
  const lookup = opts.lookup ?? createHostLookup(core.config.dnsServers);
  const allowPrivate = core.config.webhookAllowPrivate;
  const perWebhook = opts.engine?.perWebhook ?? PER_WEBHOOK_CONCURRENCY;
  const sender = createSender({ lookup, allowPrivate, connectionsPerOrigin: perWebhook });
  const attempts = new Counter({
    name: 'mailstead_webhook_attempts_total', help: 'Webhook delivery attempts by verdict (delivered, retry, gone, aborted)',
    labelNames: ['verdict'] as const, registers: [core.metrics.registry],
  });
  const claims = core.session ? postgresDeliveryClaims(core.db, core.session) : sqliteDeliveryClaims(core.db, deliveries);
  const engine = createDeliveryEngine({
    db: core.db, clock: core.clock, logger: core.logger.child({ component: 'webhooks' }), store, deliveries, sender, claims,
    options: { ...opts.engine, perWebhook }, onAttempt: (verdict) => attempts.inc({ verdict }),
  });
  const events = createEventRecorder({ clock: core.clock, store, backend: core.backend, onQueued: (hints) => engine.notify(hints) });
  const service = createWebhookService({ db: core.db, store, deliveries, clock: core.clock, allowPrivate, lookup, notify: (h) => engine.notify(h) });
  for (const job of webhookJobs({ db: core.db, clock: core.clock, logger: core.logger, store, deliveries, engine })) core.cron.add(job);
  webhookRoutes({ registry: core.registry, webhooks: service });
  // Deliveries set aside: the operator's list, retry and discard, and their gauge.
  const setAside = createWebhookSetAside({ db: core.db, deliveries, now: () => core.clock.now(), notify: (h) => engine.notify(h) });
  setAsideRoutes({ registry: core.registry, base: '/v1/set-aside/webhooks', what: 'webhook deliveries', queue: setAside });
  new Gauge({
    name: 'mailstead_webhook_deliveries_set_aside', help: 'Webhook deliveries set aside (failed) because they could not be sent as stored (mailstead set-aside list webhooks)',
    registers: [core.metrics.registry],
    async collect() { this.set(await setAside.count()); },
  });
  return {
    events,
    service,
    engine,
    /** Starts delivering (after the database is open and the worker runs). */
    async start() {
      // Many nodes on PostgreSQL: deliveries queued on any node wake every engine.
      if (core.session) {
        const log = core.logger.child({ component: 'webhooks' });
        await listenQueued(core.session, () => core.clock.now(), {
          hint: (hints) => engine.notify(hints),
          everything: () => { engine.resync().then(() => engine.wake(), (err) => log.error({ err }, 'reading due webhook deliveries failed')); },
        });
      }
      await engine.start();
    },
    /** Finishes or releases the requests under way and writes their outcomes. */
    stop: () => engine.stop(),
  };
}
export type Webhooks = ReturnType<typeof installWebhooks>;
