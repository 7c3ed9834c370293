import type { RouteRegistry } from '../http/registry.js';
import { isTrue } from '../http/validate.js';
import { taskQuery, type TaskQuery } from '../domains/schemas.js';
import { pollTask, taskEnvelope } from '../tasks/poll.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { DeletionService } from './deletion.js';
import {
  createBulkBody, createSingleBody, deleteDomainsBody, deleteMailboxesBody, listMailboxQuery,
  type CreateBulkBody, type CreateSingleBody, type DeleteDomainsBody, type DeleteMailboxesBody, type ListMailboxQuery,
} from './schemas.js';
import type { MailboxService } from './service.js';

/** The web face of mailboxes and of the bulk deletes of mailboxes and domains. */
export function mailboxRoutes({ registry, mailboxes, deletion, queue }: {
  registry: RouteRegistry; mailboxes: MailboxService; deletion: DeletionService; queue: TaskQueue;
}) {
  const poll = (path: string, summary: string, kind: string) => registry.add<unknown, TaskQuery>({
    method: 'get', path, summary, permission: 'read', query: taskQuery, errors: [404],
    async handler(ctx, { key, query }) {
      ctx.body = taskEnvelope(await pollTask(queue, key, query.task_id, [kind]));
    },
  });

  registry.add<CreateSingleBody>({
    method: 'post', path: '/v1/create/mailbox/single', summary: 'Create one mailbox (queued task)',
    permission: 'write', plan: true, body: createSingleBody, errors: [404],
    async handler(ctx, { key, body }) {
      const taskId = await mailboxes.createSingle(key, {
        domain: body.Domain, fullname: body.Email_fullname, address: body.Params.email_id, password: body.Params.password,
      });
      ctx.body = { status: 'success', task_id: taskId };
    },
  });
  poll('/v1/get/mailbox/single', 'Poll a single mailbox create task', 'mailbox.single');

  registry.add<CreateBulkBody>({
    method: 'post', path: '/v1/create/mailbox/bulk', summary: 'Create up to 100 mailboxes named after a person (queued task)',
    permission: 'write', plan: true, body: createBulkBody, errors: [404, 429],
    async handler(ctx, { key, body }) {
      const taskId = await mailboxes.createBulk(key, {
        domain: body.Domain, fullname: body.Email_fullname, count: body.Params.mailbox_no, password: body.Params.password,
      });
      ctx.body = { status: 'success', task_id: taskId };
    },
  });
  poll('/v1/get/mailbox/bulk', 'Poll a bulk mailbox create task', 'mailbox.bulk');

  registry.add<unknown, ListMailboxQuery>({
    method: 'get', path: '/v1/list/mailbox', summary: 'List the mailboxes of an owned domain',
    permission: 'read', query: listMailboxQuery, errors: [404],
    async handler(ctx, { key, query }) {
      const { domain, results } = await mailboxes.list(key, query.domain, isTrue(query.include_credentials));
      ctx.body = { domain, results, status: 'success' };
    },
  });

  registry.add<DeleteMailboxesBody>({
    method: 'post', path: '/v1/delete/mailbox/bulk', summary: 'Delete up to 100 mailboxes with their mail (queued task)',
    permission: 'write', plan: true, body: deleteMailboxesBody, errors: [429],
    async handler(ctx, { key, body }) {
      ctx.body = { status: 'success', task_id: await deletion.deleteMailboxes(key, ctx.ip, body.Mailboxes) };
    },
  });
  poll('/v1/get/delete/mailbox/bulk', 'Poll a bulk mailbox delete task', 'mailbox.delete');

  registry.add<DeleteDomainsBody>({
    method: 'post', path: '/v1/delete/domain/bulk', summary: 'Delete up to 10 domains with their sub-domains, mailboxes, aliases and mail (queued task)',
    permission: 'write', plan: true, body: deleteDomainsBody, errors: [429],
    async handler(ctx, { key, body }) {
      ctx.body = { status: 'success', task_id: await deletion.deleteDomains(key, ctx.ip, body.Domains) };
    },
  });
  poll('/v1/get/delete/domain/bulk', 'Poll a bulk domain delete task', 'domain.delete');
}
