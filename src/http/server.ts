import Koa from 'koa';
import type { Logger } from '../logger.js';
import { accessLog } from './access-log.js';
import { errorMiddleware } from './errors.js';
import { buildOpenApi } from './openapi.js';
import type { RouteRegistry } from './registry.js';

/** The Koa application: access log, error contract, every registered route, 405 and 404. */
export function createHttpApp({ registry, logger, publicUrl }: { registry: RouteRegistry; logger: Logger; publicUrl: string }) {
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
  app.use(accessLog(logger));
  app.use(errorMiddleware(logger));
  app.use(registry.router.routes());
  app.use(registry.router.allowedMethods());
  return app;
}
