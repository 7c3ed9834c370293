import { ApiError } from '../errors.js';
import type { RouteRegistry } from '../http/registry.js';
import type { MailboxService } from '../mailboxes/service.js';
import { pollTask, taskEnvelope } from '../tasks/poll.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { Task } from '../tasks/types.js';
import { checkCaller } from './caller.js';
import { LEGACY_PREFIX, LEGACY_ROUTE } from './options.js';
import {
  legacyCreateBulkBody, legacyCreateSingleBody, legacyListMailboxQuery, legacyTaskQuery,
  type LegacyCreateBulkBody, type LegacyCreateSingleBody, type LegacyListMailboxQuery, type LegacyTaskQuery,
} from './schemas.js';

/** The per-entry status of a created mailbox in variant B's polls. */
export const CREATED = 'Created successfully.';
/** The reason of a failed bulk task on variant B's poll (DECISIONS.md section 11). */
export const BULK_FAILED = 'task processing failed';

/** Variant B's results of a mailbox task: `{status}` per address, never a password; [] until completed. */
function statusOnly(task: Task): unknown {
  if (task.status !== 'completed') return [];
  const out: Record<string, { status: string }> = {};
  for (const address of Object.keys((task.results ?? {}) as Record<string, unknown>)) out[address] = { status: CREATED };
  return out;
}

/**
 * Variant B's face of mailboxes: the same service and tasks as variant A. Creates refuse a missing
 * permission or plan with 401 and take no bulk cooldown; polls show `{status}` per entry.
 */
export function legacyMailboxRoutes({ registry, mailboxes, queue }: { registry: RouteRegistry; mailboxes: MailboxService; queue: TaskQueue }) {
  registry.add<LegacyCreateSingleBody>({
    ...LEGACY_ROUTE,
    method: 'post', path: `${LEGACY_PREFIX}/create/mailbox/single`, summary: 'Create one mailbox named by its local part (variant B, queued task)',
    permission: 'write', plan: true, deniedStatus: 401, body: legacyCreateSingleBody, errors: [404],
    async handler(ctx, { key, body }) {
      const p = body.Params;
      const taskId = await mailboxes.createSingle(key, {
        domain: body.Domain, address: `${body.Email_fullname}@${body.Domain}`, fullname: p.display_name ?? '', password: p.password, quotaMb: p.quota_mb,
      }).catch(renameAddressField);
      ctx.body = { status: 'success', task_id: taskId };
    },
  });

  registry.add<LegacyCreateBulkBody>({
    ...LEGACY_ROUTE,
    method: 'post', path: `${LEGACY_PREFIX}/create/mailbox/bulk`, summary: 'Create up to 100 mailboxes named after a person (variant B, queued task, no cooldown)',
    permission: 'write', plan: true, deniedStatus: 401, body: legacyCreateBulkBody, errors: [404],
    async handler(ctx, { key, body }) {
      const p = body.Params;
      const taskId = await mailboxes.createBulk(key, {
        domain: body.Domain, fullname: body.Email_fullname, count: p.count, password: p.password, quotaMb: p.quota_mb, cooldown: false,
      });
      ctx.body = { status: 'success', task_id: taskId };
    },
  });

  registry.add<unknown, LegacyTaskQuery>({
    ...LEGACY_ROUTE,
    method: 'get', path: `${LEGACY_PREFIX}/get/mailbox/single`, summary: 'Poll a single mailbox create task (variant B: {status} per entry)',
    permission: 'read', query: legacyTaskQuery, errors: [404],
    async handler(ctx, { key, query }) {
      ctx.body = taskEnvelope(...withStatusOnly(await pollTask(queue, key, query.task_id, ['mailbox.single'])));
    },
  });

  registry.add<unknown, LegacyTaskQuery>({
    ...LEGACY_ROUTE,
    method: 'get', path: `${LEGACY_PREFIX}/get/mailbox/bulk`, summary: 'Poll a bulk mailbox create task (variant B: {status} per entry)',
    permission: 'read', query: legacyTaskQuery, errors: [404],
    async handler(ctx, { key, query }) {
      ctx.body = taskEnvelope(...withStatusOnly(await pollTask(queue, key, query.task_id, ['mailbox.bulk'], BULK_FAILED)));
    },
  });

  registry.add<unknown, LegacyListMailboxQuery>({
    ...LEGACY_ROUTE,
    method: 'get', path: `${LEGACY_PREFIX}/list/mailbox`, summary: 'List the mailboxes of an owned domain (variant B: with user_id, imap_credentials null)',
    permission: 'read', query: legacyListMailboxQuery, errors: [404],
    async handler(ctx, { key, query }) {
      const userId = checkCaller(key, query.caller_id);
      const { domain, results } = await mailboxes.list(key, query.domain, false);
      const entries: Record<string, object> = {};
      for (const [address, entry] of Object.entries(results)) entries[address] = { ...entry, imap_credentials: null };
      ctx.body = { domain, results: entries, status: 'success', user_id: userId };
    },
  });
}

/** The service names variant A's address field; variant B's client sent it as Email_fullname. */
function renameAddressField(err: unknown): never {
  if (err instanceof ApiError && err.reason.startsWith('Params.email_id')) {
    throw new ApiError(err.status, err.reason.replace('Params.email_id', 'Email_fullname'), err.headers);
  }
  throw err;
}

/** A task with its variant B results, as the arguments of taskEnvelope. */
const withStatusOnly = (task: Task): [Task, unknown] => [task, statusOnly(task)];
