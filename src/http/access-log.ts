import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Counter, Histogram } from 'prom-client';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;
const DOWNLOAD = '/attachments/download/';

// Signed download tokens are credentials: they must not land in a log line.
const loggablePath = (path: string) => (path.includes(DOWNLOAD) ? path.replace(/(\/attachments\/download\/)[^/]+/, '$1[token]') : path);

/** Most label combinations whose metric children are kept (methods, routes and statuses are few). */
const CHILDREN_MAX = 2000;

/**
 * Gives each request an id (X-Request-Id), logs one line per request (never headers, bodies or
 * query strings) and counts it in the metrics by route pattern (not raw path, to bound the labels).
 *
 * Cheap on purpose, since it runs on every request: the access line goes through one child logger
 * made here without the redaction paths (its fields are fixed and none is a secret; the download
 * token is masked above), and the metric children of each label combination are looked up once
 * and kept, instead of prom-client hashing the label object on every call.
 */
export function accessLog(logger: Logger, metrics: Metrics) {
  const log = logger.child({}, { redact: [] });
  const counters = new Map<string, Counter.Internal>();
  const durations = new Map<string, Histogram.Internal<'method' | 'route'>>();

  function count(method: string, route: string, status: number, seconds: number) {
    const key = `${method} ${route}`;
    let duration = durations.get(key);
    if (!duration) {
      duration = metrics.httpDuration.labels(method, route);
      if (durations.size < CHILDREN_MAX) durations.set(key, duration);
    }
    duration.observe(seconds);
    const keyWithStatus = `${key} ${status}`;
    let counter = counters.get(keyWithStatus);
    if (!counter) {
      counter = metrics.httpRequests.labels(method, route, String(status));
      if (counters.size < CHILDREN_MAX) counters.set(keyWithStatus, counter);
    }
    counter.inc();
  }

  return async (ctx: Context, next: Next) => {
    const start = performance.now();
    const incoming = ctx.get('x-request-id');
    const reqId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.reqId = reqId;
    ctx.set('X-Request-Id', reqId);
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const method = ctx.method;
      const status = ctx.status;
      const ms = performance.now() - start;
      count(method, route, status, ms / 1000);
      if (log.isLevelEnabled('info')) {
        log.info({ req_id: reqId, method, path: loggablePath(ctx.path), status, ms: Math.round(ms * 10) / 10, key_id: ctx.state.keyId }, 'request');
      }
    }
  };
}
