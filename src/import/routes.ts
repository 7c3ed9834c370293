import { notFound, unprocessable } from '../errors.js';
import type { RouteRegistry } from '../http/registry.js';
import { taskQuery, type TaskQuery } from '../domains/schemas.js';
import { taskEnvelope } from '../tasks/poll.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { ImportResults } from './progress.js';
import { mailboxParams, type MailboxParams } from '../mailboxes/owned.js';
import { importBody, importQuery, type ImportBody, type ImportQuery } from './schemas.js';
import type { ImportService } from './service.js';
import { IMPORT_KIND } from './task.js';

/** The media types of uploads and the source each stands for. */
const UPLOADS = { 'application/mbox': 'mbox', 'application/x-tar': 'maildir' } as const;

/** The web face of imports (DECISIONS.md section 20). */
export function importRoutes({ registry, imports, queue }: { registry: RouteRegistry; imports: ImportService; queue: TaskQueue }) {
  registry.add<ImportBody, ImportQuery, MailboxParams>({
    method: 'post', path: '/v1/mailboxes/{email}/import',
    summary: 'Import mail into a mailbox (queued task): from an IMAP server (JSON body), or an uploaded mbox (application/mbox, into ?folder=) or Maildir tar (application/x-tar)',
    permission: 'write', plan: true, body: importBody, uploads: Object.keys(UPLOADS), query: importQuery, params: mailboxParams,
    errors: [404, 413, 415, 429],
    async handler(ctx, { key, body, query, params, upload }) {
      let taskId: number;
      if (upload) {
        const folder = !query.folder || query.folder.toUpperCase() === 'INBOX' ? 'INBOX' : query.folder;
        taskId = await imports.startUpload(key, params.email, ctx.req, UPLOADS[upload as keyof typeof UPLOADS], folder);
      } else {
        taskId = await imports.startImap(key, params.email, body);
      }
      ctx.body = { status: 'success', task_id: taskId };
    },
  });

  registry.add<unknown, TaskQuery>({
    method: 'get', path: '/v1/get/import', summary: 'Poll an import task: progress while it runs, the counts and any error after',
    permission: 'read', query: taskQuery, errors: [404],
    async handler(ctx, { key, query }) {
      const task = await queue.get(query.task_id);
      if (!task || task.keyId !== key.id) throw notFound('Task not found');
      if (task.kind !== IMPORT_KIND) throw unprocessable('Task is not of the kind this endpoint polls');
      // Section 20 shows an import's results while it runs and after it failed, not only once completed.
      const kept = (task.results ?? {}) as Partial<ImportResults>;
      const results: ImportResults = {
        folders: kept.folders ?? 0, messages_total: kept.messages_total ?? 0, messages_imported: kept.messages_imported ?? 0,
        messages_skipped: kept.messages_skipped ?? 0, bytes: kept.bytes ?? 0,
        status: task.status === 'completed' ? 'completed' : task.status === 'failed' ? 'failed' : 'running',
        ...(task.status === 'failed' ? { error: task.error ?? 'Import failed' } : {}),
      };
      ctx.body = taskEnvelope(task, results);
    },
  });
}
