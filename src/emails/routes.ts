import type { Context } from 'koa';
import type { RouteRegistry } from '../http/registry.js';
import { isTrue } from '../http/validate.js';
import type { EmailFiles } from './files.js';
import {
  attachmentParams, downloadParams, emailParams, listQuery, syncQuery,
  type AttachmentParams, type DownloadParams, type EmailParams, type ListQuery, type SyncQuery,
} from './schemas.js';
import { DEFAULT_PER_PAGE, type EmailService } from './service.js';

const ms = (v: string | undefined) => (v === undefined ? undefined : Date.parse(v));

/**
 * Answers with a body that is already JSON text (the reads serialise their own answers, often in a
 * reader thread): the same bytes and Content-Type (`application/json; charset=utf-8`) as Koa gives
 * an object body.
 */
function json(ctx: Context, text: string): void {
  ctx.type = 'application/json';
  ctx.body = text;
}

/** The web face of inbox reading: list, sync, get, read, delete, attachment links and downloads, raw. */
export function emailRoutes({ registry, emails, files }: { registry: RouteRegistry; emails: EmailService; files: EmailFiles }) {
  registry.add<unknown, ListQuery>({
    method: 'get', path: '/v1/emails', summary: 'List stored emails, newest first, cursor-paginated',
    permission: 'read', query: listQuery,
    async handler(ctx, { key, query }) {
      json(ctx, await emails.listBody(key.tenantId, {
        mailboxId: query.mailbox_id, folder: query.folder ?? 'INBOX', unread: query.unread === undefined ? undefined : isTrue(query.unread),
        since: ms(query.since), before: ms(query.before), q: query.q, cursor: query.cursor, perPage: query.per_page ?? DEFAULT_PER_PAGE,
      }));
    },
  });

  // Before /v1/emails/{email}, so that "sync" is not taken for an id.
  registry.add<unknown, SyncQuery>({
    method: 'get', path: '/v1/emails/sync', summary: 'Changes since a time, oldest first, with tombstones for deleted mail',
    permission: 'read', query: syncQuery,
    async handler(ctx, { key, query }) {
      json(ctx, await emails.syncBody(key.tenantId, {
        since: Date.parse(query.since), cursor: query.cursor, perPage: query.per_page ?? DEFAULT_PER_PAGE, mailboxId: query.mailbox_id,
      }));
    },
  });

  registry.add<unknown, unknown, EmailParams>({
    method: 'get', path: '/v1/emails/{email}', summary: 'Get one email with its attachment metadata',
    permission: 'read', params: emailParams, errors: [404],
    async handler(ctx, { key, params }) {
      json(ctx, await emails.getBody(key.tenantId, params.email));
    },
  });

  registry.add<unknown, unknown, EmailParams>({
    method: 'post', path: '/v1/emails/{email}/read', summary: 'Mark an email read (idempotent; emits email.read once)',
    permission: 'write', params: emailParams, errors: [404],
    async handler(ctx, { key, params }) {
      await emails.markRead(key.tenantId, params.email);
      ctx.body = { status: 'success' };
    },
  });

  registry.add<unknown, unknown, EmailParams>({
    method: 'delete', path: '/v1/emails/{email}', summary: 'Soft-delete an email (emits email.deleted)',
    permission: 'write', params: emailParams, errors: [404],
    async handler(ctx, { key, params }) {
      await emails.remove(key.tenantId, params.email);
      ctx.body = { status: 'success' };
    },
  });

  registry.add<unknown, unknown, EmailParams>({
    method: 'get', path: '/v1/emails/{email}/raw', summary: 'The email as RFC 5322 bytes (message/rfc822)',
    permission: 'read', params: emailParams, errors: [404],
    async handler(ctx, { key, params }) {
      const raw = await files.raw(key.tenantId, params.email);
      ctx.set('Content-Type', 'message/rfc822');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = raw.body;
      if (raw.size !== undefined) ctx.length = raw.size;
    },
  });

  registry.add<unknown, unknown, AttachmentParams>({
    method: 'get', path: '/v1/emails/{email}/attachments/{attachment}', summary: 'A signed, expiring download link for an attachment',
    permission: 'read', params: attachmentParams, errors: [404],
    async handler(ctx, { key, params }) {
      ctx.body = { status: 'success', data: await files.link(key.tenantId, params.email, params.attachment) };
    },
  });

  registry.add<unknown, unknown, DownloadParams>({
    method: 'get', path: '/v1/attachments/download/{token}', summary: 'Download an attachment through a signed link (no key)',
    permission: false, params: downloadParams, errors: [403, 404],
    async handler(ctx, { params }) {
      const file = await files.download(params.token);
      ctx.set('Content-Disposition', file.disposition);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'private, no-store');
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      // A link is fetched once; not keeping the connection also lets a shutdown finish at once.
      ctx.set('Connection', 'close');
      // Set as stored (ctx.type would append a charset of its own).
      ctx.set('Content-Type', file.contentType);
      ctx.body = file.body;
      ctx.length = file.size;
    },
  });
}
