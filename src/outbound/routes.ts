import type { RouteRegistry } from '../http/registry.js';
import { outboundListQuery, outboundParams, type OutboundListQuery, type OutboundParams } from './schemas.js';
import { DEFAULT_PER_PAGE, type OutboundService } from './service.js';

/** The web face of the outbound queue (DECISIONS.md section 12). */
export function outboundRoutes({ registry, outbound }: { registry: RouteRegistry; outbound: OutboundService }) {
  registry.add<unknown, OutboundListQuery>({
    method: 'get', path: '/v1/outbound', summary: 'List the account\'s outbound items (forwards, submissions, DSNs), newest first, cursor-paginated',
    permission: 'read', query: outboundListQuery,
    async handler(ctx, { key, query }) {
      ctx.body = { status: 'success', ...(await outbound.list(key.tenantId, { status: query.status, cursor: query.cursor, perPage: query.per_page ?? DEFAULT_PER_PAGE })) };
    },
  });

  registry.add<unknown, unknown, OutboundParams>({
    method: 'get', path: '/v1/outbound/{id}', summary: 'Get one outbound item', permission: 'read', params: outboundParams, errors: [404],
    async handler(ctx, { key, params }) {
      ctx.body = { status: 'success', data: await outbound.get(key.tenantId, params.id) };
    },
  });

  registry.add<unknown, unknown, OutboundParams>({
    method: 'post', path: '/v1/outbound/{id}/retry', summary: 'Try a queued or failed outbound item now (a sent one is 422)',
    permission: 'write', params: outboundParams, errors: [404, 422],
    async handler(ctx, { key, params }) {
      await outbound.retry(key.tenantId, params.id);
      ctx.body = { status: 'success' };
    },
  });
}
