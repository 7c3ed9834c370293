import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../logger.js';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

// Signed download tokens are credentials: they must not land in a log line.
const loggablePath = (path: string) => path.replace(/(\/attachments\/download\/)[^/]+/, '$1[token]');

/** Gives each request an id (X-Request-Id) and logs one line per request: never headers, bodies or query strings. */
export function accessLog(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const start = performance.now();
    const incoming = ctx.get('x-request-id');
    const reqId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.reqId = reqId;
    ctx.set('X-Request-Id', reqId);
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('info')) {
        logger.info({
          req_id: reqId, method: ctx.method, path: loggablePath(ctx.path), status: ctx.status,
          ms: Math.round((performance.now() - start) * 10) / 10, key_id: ctx.state.keyId,
        }, 'request');
      }
    }
  };
}
