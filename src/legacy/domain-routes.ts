import type { Config } from '../config.js';
import type { DomainService, SubDomainCooldown } from '../domains/service.js';
import type { RouteRegistry } from '../http/registry.js';
import { checkCaller } from './caller.js';
import { LEGACY_PREFIX, LEGACY_ROUTE } from './options.js';
import {
  legacyCreateDomainBody, legacyCreateSubDomainBody, legacyListDomainQuery,
  type LegacyCreateDomainBody, type LegacyCreateSubDomainBody, type LegacyListDomainQuery,
} from './schemas.js';

/** Variant B's sub-domain counter: separate from variant A's, and hourly by default. */
export const LEGACY_SUB_DOMAIN_COOLDOWN = 'legacy-sub-domain';

/**
 * Variant B's face of domains: the same service as variant A; creates answer without the task id
 * (the outcome shows in list/domain), and the list answers for a checked caller_id.
 */
export function legacyDomainRoutes({ registry, domains, config }: { registry: RouteRegistry; domains: DomainService; config: Readonly<Config> }) {
  const subDomainCooldown: SubDomainCooldown = { scope: LEGACY_SUB_DOMAIN_COOLDOWN, seconds: config.legacyCooldownSeconds };

  registry.add<LegacyCreateDomainBody>({
    ...LEGACY_ROUTE,
    method: 'post', path: `${LEGACY_PREFIX}/create/domain`, summary: 'Register a root domain (variant B: answers without a task id)',
    permission: 'write', plan: true, body: legacyCreateDomainBody, errors: [409],
    async handler(ctx, { key, body }) {
      const { domain } = await domains.createRoot(key, body.Domain, body.Params?.total_mailbox_allowed);
      ctx.body = { status: 'success', domain };
    },
  });

  registry.add<LegacyCreateSubDomainBody>({
    ...LEGACY_ROUTE,
    method: 'post', path: `${LEGACY_PREFIX}/create/sub-domain`, summary: 'Register sub-domains of an owned root domain (variant B: answers with the parent, hourly cooldown)',
    permission: 'write', plan: true, body: legacyCreateSubDomainBody, errors: [404, 409, 429],
    async handler(ctx, { key, body }) {
      const { domain } = await domains.createSubs(key, body.Domain, body.Params.sub_domains, body.Params.total_mailbox_allowed, subDomainCooldown);
      ctx.body = { status: 'success', domain };
    },
  });

  registry.add<unknown, LegacyListDomainQuery>({
    ...LEGACY_ROUTE,
    method: 'get', path: `${LEGACY_PREFIX}/list/domain`, summary: 'List the account\'s domains (variant B: with user_id, without domain_type)',
    permission: 'read', query: legacyListDomainQuery,
    async handler(ctx, { key, query }) {
      const userId = checkCaller(key, query.caller_id);
      const { total_domain, results } = await domains.list(key);
      const entries: Record<string, { status: string; domain_quota: string; mailbox_count: string; created_at: string }> = {};
      for (const [host, { status, domain_quota, mailbox_count, created_at }] of Object.entries(results)) {
        entries[host] = { status, domain_quota, mailbox_count, created_at };
      }
      ctx.body = { total_domain, results: entries, status: 'success', user_id: userId };
    },
  });
}
