import { forbidden, notFound } from '../errors.js';
import type { RouteRegistry } from '../http/registry.js';
import { idSchema } from '../http/validate.js';
import type { ApiKey } from '../tenants/service.js';
import { SET_ASIDE_LIST_MAX, type SetAsideQueue } from './queue.js';

const rowParams = { type: 'object', required: ['id'], properties: { id: idSchema } } as const;
const listQuery = { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: SET_ASIDE_LIST_MAX } } } as const;

/** Set-aside rows belong to no tenant's view: the operator's (administrators') alone. */
function administrator(key: ApiKey): void {
  if (!key.isAdmin) throw forbidden('Only administrator keys may see or change set-aside rows');
}

/**
 * `GET {base}` lists a queue's set-aside rows, `POST {base}/{id}/retry` queues one again for one
 * more try, `DELETE {base}/{id}` deletes it: administrator keys only. `what` names the rows in the
 * summaries ("outbound items").
 */
export function setAsideRoutes({ registry, base, what, queue }: { registry: RouteRegistry; base: string; what: string; queue: SetAsideQueue }): void {
  registry.add<unknown, { limit?: number }>({
    method: 'get', path: base, summary: `${what} set aside after failing every try, oldest first (administrators)`,
    permission: 'read', query: listQuery, errors: [403],
    async handler(ctx, { key, query }) {
      administrator(key);
      ctx.body = { status: 'success', data: await queue.list(query.limit) };
    },
  });

  registry.add<unknown, unknown, { id: number }>({
    method: 'post', path: `${base}/{id}/retry`, summary: `Queue one of the set-aside ${what} again for one more try (administrators)`,
    permission: 'write', params: rowParams, errors: [403, 404],
    async handler(ctx, { key, params }) {
      administrator(key);
      if (!(await queue.retry(params.id))) throw notFound(`Nothing set aside with id ${params.id}`);
      ctx.body = { status: 'success' };
    },
  });

  registry.add<unknown, unknown, { id: number }>({
    method: 'delete', path: `${base}/{id}`, summary: `Delete one of the set-aside ${what} (administrators)`,
    permission: 'write', params: rowParams, errors: [403, 404],
    async handler(ctx, { key, params }) {
      administrator(key);
      if (!(await queue.discard(params.id))) throw notFound(`Nothing set aside with id ${params.id}`);
      ctx.body = { status: 'success' };
    },
  });
}
