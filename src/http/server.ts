import Koa, { type Middleware } from 'koa';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { accessLog } from './access-log.js';
import { errorMiddleware } from './errors.js';
import { buildOpenApi } from './openapi.js';
import type { RouteRegistry } from './registry.js';

/**
 * The Koa application: access log, error contract, /metrics, `wellKnown` (paths outside /api that
 * answer without a key, such as ACME's /.well-known/acme-challenge/), every registered route, 405 and 404.
 */
export function createHttpApp({ registry, logger, publicUrl, metrics, lifecycle, wellKnown = [] }: {
  registry: RouteRegistry; logger: Logger; publicUrl: string; metrics: Metrics; lifecycle: { draining: boolean }; wellKnown?: Middleware[];
}) {
  registry.add({
    method: 'get', path: '/health', summary: 'Liveness: the database is open and the listeners are up', permission: false,
    handler: (ctx) => { ctx.body = { status: 'success' }; },
  });
  let openapi: string | null = null;
  registry.add({
    method: 'get', path: '/openapi.json', summary: 'This description', permission: false,
    handler: (ctx) => {
      openapi ??= JSON.stringify(buildOpenApi(registry.specs(), publicUrl + '/'));
      ctx.type = 'application/json';
      ctx.body = openapi;
    },
  });
  const app = new Koa({ proxy: false });
  app.silent = true;
  // While shutting down, every response ends its connection, so keep-alive clients let go.
  app.use(async (ctx, next) => {
    await next();
    if (lifecycle.draining) ctx.set('Connection', 'close');
  });
  app.use(accessLog(logger, metrics));
  app.use(errorMiddleware(logger));
  // Prometheus text at /metrics, outside /api and without a key (bind to loopback or protect it in production).
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics') return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') { ctx.set('Allow', 'GET, HEAD'); ctx.status = 405; return; }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  for (const middleware of wellKnown) app.use(middleware);
  app.use(registry.router.routes());
  app.use(registry.router.allowedMethods());
  return app;
}
