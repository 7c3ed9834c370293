import type { AliasService } from '../aliases/service.js';
import type { RouteRegistry } from '../http/registry.js';
import { checkCaller } from './caller.js';
import { LEGACY_PREFIX, LEGACY_ROUTE } from './options.js';
import { legacyListAliasQuery, type LegacyListAliasQuery } from './schemas.js';

/** Variant B's face of aliases: the list only, as variant A's plus `user_id` for a checked caller_id. */
export function legacyAliasRoutes({ registry, aliases }: { registry: RouteRegistry; aliases: AliasService }) {
  registry.add<unknown, LegacyListAliasQuery>({
    ...LEGACY_ROUTE,
    method: 'get', path: `${LEGACY_PREFIX}/list/alias`, summary: 'List the aliases of an owned domain (variant B: with user_id)',
    permission: 'read', query: legacyListAliasQuery, errors: [404],
    async handler(ctx, { key, query }) {
      const userId = checkCaller(key, query.caller_id);
      const { domain, results } = await aliases.list(key, query.domain);
      ctx.body = { domain, results, status: 'success', user_id: userId };
    },
  });
}
