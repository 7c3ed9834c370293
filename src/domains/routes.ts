import type { RouteRegistry } from '../http/registry.js';
import { pollTask, taskEnvelope } from '../tasks/poll.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { Task } from '../tasks/types.js';
import {
  createDomainBody, createSubDomainBody, domainPathParams, taskQuery,
  type CreateDomainBody, type CreateSubDomainBody, type TaskQuery,
} from './schemas.js';
import type { DomainService } from './service.js';

/** Task kinds that GET /v1/get/domain polls (creation and on-demand DNS checks). */
export const DOMAIN_POLL_KINDS = ['domain.create', 'domain.check'];

/** The web face of domains and sub-domains. */
export function domainRoutes({ registry, domains, queue }: { registry: RouteRegistry; domains: DomainService; queue: TaskQueue }) {
  // Completed results show the records as they are now, so DNS checks are visible on the poll.
  async function liveResults(task: Task) {
    if (task.status !== 'completed') return [];
    if (task.kind === 'subdomain.create') {
      const stored = task.results as { domain: string; results: Record<string, unknown> };
      const results: Record<string, unknown> = {};
      for (const [host, old] of Object.entries(stored.results)) results[host] = (await domains.current(host)) ?? old;
      return { domain: stored.domain, results };
    }
    const now = await domains.current(task.domain);
    return now ? { domain: task.domain, ...now } : task.results;
  }

  registry.add<CreateDomainBody>({
    method: 'post', path: '/v1/create/domain', summary: 'Register a root domain (queued task)',
    permission: 'write', plan: true, body: createDomainBody, errors: [409],
    async handler(ctx, { key, body }) {
      const { taskId, domain } = await domains.createRoot(key, body.Domain, body.Params?.total_mailbox_allowed);
      ctx.body = { status: 'success', task_id: taskId, domain };
    },
  });

  registry.add<unknown, TaskQuery>({
    method: 'get', path: '/v1/get/domain', summary: 'Poll a domain task', permission: 'read', query: taskQuery, errors: [404],
    async handler(ctx, { key, query }) {
      const task = await pollTask(queue, key, query.task_id, DOMAIN_POLL_KINDS);
      ctx.body = taskEnvelope(task, await liveResults(task));
    },
  });

  registry.add<CreateSubDomainBody>({
    method: 'post', path: '/v1/create/sub-domain', summary: 'Register sub-domains of an owned root domain (queued task)',
    permission: 'write', plan: true, body: createSubDomainBody, errors: [404, 409, 429],
    async handler(ctx, { key, body }) {
      const { taskId, domain } = await domains.createSubs(key, body.Domain, body.Params.sub_domains, body.Params.total_mailbox_allowed);
      ctx.body = { status: 'success', task_id: taskId, domain };
    },
  });

  registry.add<unknown, TaskQuery>({
    method: 'get', path: '/v1/get/sub-domain', summary: 'Poll a sub-domain task', permission: 'read', query: taskQuery, errors: [404],
    async handler(ctx, { key, query }) {
      const task = await pollTask(queue, key, query.task_id, ['subdomain.create']);
      ctx.body = taskEnvelope(task, await liveResults(task));
    },
  });

  registry.add<unknown, unknown, { domain: string }>({
    method: 'get', path: '/v1/domains/{domain}', summary: 'A domain with its status and DNS records as the last check left them',
    permission: 'read', params: domainPathParams, errors: [404],
    async handler(ctx, { key, params }) {
      ctx.body = { status: 'success', data: await domains.get(key, params.domain) };
    },
  });

  registry.add({
    method: 'get', path: '/v1/list/domain', summary: 'List the account\'s domains', permission: 'read',
    async handler(ctx, { key }) {
      const { total_domain, results } = await domains.list(key);
      ctx.body = { total_domain, results, status: 'success' };
    },
  });
}
