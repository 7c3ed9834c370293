import { taskQuery, type TaskQuery } from '../domains/schemas.js';
import type { RouteRegistry } from '../http/registry.js';
import { pollTask, shortTaskEnvelope } from '../tasks/poll.js';
import type { TaskQueue } from '../tasks/queue.js';
import {
  createAliasBody, createAliasBulkBody, deleteAliasesBody, editAliasBody, listAliasQuery,
  type CreateAliasBody, type CreateAliasBulkBody, type DeleteAliasesBody, type EditAliasBody, type ListAliasQuery,
} from './schemas.js';
import type { AliasService } from './service.js';

/** Task kinds that GET /v1/get/alias polls. */
export const ALIAS_POLL_KINDS = ['alias.create', 'alias.bulk', 'alias.edit'];

/** The web face of aliases, forwarders and catch-alls. */
export function aliasRoutes({ registry, aliases, queue }: { registry: RouteRegistry; aliases: AliasService; queue: TaskQueue }) {
  registry.add<CreateAliasBody>({
    method: 'post', path: '/v1/create/alias', summary: 'Create an alias, forwarder or catch-all (queued task)',
    permission: 'write', plan: true, body: createAliasBody, errors: [404],
    async handler(ctx, { key, body }) {
      const p = body.Params;
      const taskId = await aliases.create(key, { domain: body.Domain, address: p.address, goto: p.goto, catchAll: p.catch_all, senderAllowed: p.sender_allowed });
      ctx.body = { status: 'success', task_id: taskId };
    },
  });

  registry.add<CreateAliasBulkBody>({
    method: 'post', path: '/v1/create/alias/bulk', summary: 'Create up to 100 aliases on one domain (queued task)',
    permission: 'write', plan: true, body: createAliasBulkBody, errors: [404],
    async handler(ctx, { key, body }) {
      ctx.body = { status: 'success', task_id: await aliases.createBulk(key, { domain: body.Domain, aliases: body.Params.aliases }) };
    },
  });

  registry.add<EditAliasBody>({
    method: 'post', path: '/v1/edit/alias', summary: 'Change the destinations, active flag or send-as right of an alias (queued task)',
    permission: 'write', body: editAliasBody,
    async handler(ctx, { key, body }) {
      const taskId = await aliases.edit(key, { address: body.address, goto: body.goto, active: body.active, senderAllowed: body.sender_allowed });
      ctx.body = { status: 'success', task_id: taskId };
    },
  });

  registry.add<unknown, TaskQuery>({
    method: 'get', path: '/v1/get/alias', summary: 'Poll an alias create, bulk create or edit task', permission: 'read', query: taskQuery, errors: [404],
    async handler(ctx, { key, query }) {
      ctx.body = shortTaskEnvelope(await pollTask(queue, key, query.task_id, ALIAS_POLL_KINDS));
    },
  });

  registry.add<unknown, ListAliasQuery>({
    method: 'get', path: '/v1/list/alias', summary: 'List the aliases of an owned domain', permission: 'read', query: listAliasQuery, errors: [404],
    async handler(ctx, { key, query }) {
      const { domain, results } = await aliases.list(key, query.domain);
      ctx.body = { domain, results, status: 'success' };
    },
  });

  registry.add<DeleteAliasesBody>({
    method: 'post', path: '/v1/delete/alias/bulk', summary: 'Delete up to 100 aliases (queued task)',
    permission: 'write', plan: true, body: deleteAliasesBody, errors: [429],
    async handler(ctx, { key, body }) {
      ctx.body = { status: 'success', task_id: await aliases.deleteBulk(key, ctx.ip, body.Aliases) };
    },
  });

  registry.add<unknown, TaskQuery>({
    method: 'get', path: '/v1/get/delete/alias/bulk', summary: 'Poll an alias bulk delete task', permission: 'read', query: taskQuery, errors: [404],
    async handler(ctx, { key, query }) {
      ctx.body = shortTaskEnvelope(await pollTask(queue, key, query.task_id, ['alias.delete']));
    },
  });
}
