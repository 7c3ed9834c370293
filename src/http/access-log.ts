import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

// Signed download tokens are credentials: they must not land in a log line.
const loggablePath = (path: string) => path.replace(/(\/attachments\/download\/)[^/]+/, '$1[token]');

/**
 * Gives each request an id (X-Request-Id), logs one line per request (never headers, bodies or
 * query strings) and counts it in the metrics by route pattern (not raw path, to bound the labels).
 */
export function accessLog(logger: Logger, metrics: Metrics) {
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
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, (performance.now() - start) / 1000);
      if (logger.isLevelEnabled('info')) {
        logger.info({
          req_id: reqId, method: ctx.method, path: loggablePath(ctx.path), status: ctx.status,
          ms: Math.round((performance.now() - start) * 10) / 10, key_id: ctx.state.keyId,
        }, 'request');
      }
    }
  };
}
