import { domainPathParams } from '../domains/schemas.js';
import type { RouteRegistry } from '../http/registry.js';
import type { DnsService } from './service.js';

/** The web face of the DNS verification loop (polled at GET /v1/get/domain, see domains/routes.ts). */
export function dnsRoutes({ registry, dns }: { registry: RouteRegistry; dns: DnsService }) {
  registry.add<unknown, unknown, { domain: string }>({
    method: 'post', path: '/v1/domains/{domain}/check', summary: 'Check a domain\'s DNS records now (queued task, polled at /v1/get/domain)',
    permission: 'write', params: domainPathParams, errors: [404],
    async handler(ctx, { key, params }) {
      const { taskId, domain } = await dns.requestCheck(key, params.domain);
      ctx.body = { status: 'success', task_id: taskId, domain };
    },
  });
}
