import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus metrics. One registry per app (not prom-client's global one), so several
 * apps in one test process do not collide. Capabilities add their own counters through `registry`.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mailstead_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'mailstead_http_requests_total', help: 'HTTP requests by method, route and status',
      labelNames: ['method', 'route', 'status'] as const, registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'mailstead_http_request_duration_seconds', help: 'HTTP request duration',
      labelNames: ['method', 'route'] as const, buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5], registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
