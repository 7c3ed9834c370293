import type { Context, Next } from 'koa';
import type { Logger } from '../logger.js';
import { ApiError } from '../errors.js';

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/** Whether an error (or the one it wraps) says the disk or the database is full. */
export function isStorageFull(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && FULL_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && /\b(ENOSPC|EDQUOT|SQLITE_FULL)\b|database or disk is full/.test(e.message)) return true;
  }
  return false;
}

/**
 * Turns every failure into the error contract `{status:"error", reason}`: ApiError as it says,
 * router errors (405, 501) with their status, a full disk 503 with Retry-After, anything else a
 * 500 whose stack goes only to the log.
 */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        // The router answers 405/501 with only an Allow header; unmatched paths leave a bare 404.
        if (ctx.status === 404) throw new ApiError(404, 'Route not found');
        if (ctx.status === 405 || ctx.status === 501) throw new ApiError(405, 'Method not allowed');
      }
    } catch (err) {
      const e = err as { status?: number; expose?: boolean; message?: string; headers?: Record<string, string> };
      if (err instanceof ApiError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = { status: 'error', reason: err.reason };
      } else if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
        ctx.status = e.status;
        if (e.headers) ctx.set(e.headers);
        ctx.body = { status: 'error', reason: e.status === 405 ? 'Method not allowed' : (e.message ?? 'Bad request') };
      } else if (e.status === 501) {
        ctx.status = 405;
        ctx.body = { status: 'error', reason: 'Method not allowed' };
      } else if (isStorageFull(err)) {
        // Nothing was acknowledged; the client should come back once an operator made room.
        ctx.status = 503;
        ctx.set('Retry-After', '60');
        ctx.body = { status: 'error', reason: 'Storage is full: try again later' };
        logger.error({ err, req_id: ctx.state.reqId }, 'storage full');
      } else {
        ctx.status = 500;
        ctx.body = { status: 'error', reason: 'Internal server error' };
        logger.error({ err, req_id: ctx.state.reqId }, 'unhandled error');
      }
    }
  };
}
