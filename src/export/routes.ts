import type { Db } from '../db/connection.js';
import { notFound } from '../errors.js';
import type { RouteRegistry } from '../http/registry.js';
import { mailboxParams, ownedMailbox, type MailboxParams } from '../mailboxes/owned.js';
import { exportQuery, type ExportQuery } from './schemas.js';
import type { Exports } from './stream.js';

/** GET /v1/mailboxes/{email}/export (DECISIONS.md section 20): one folder as mbox, or the mailbox as a Maildir++ tar. */
export function exportRoutes({ registry, db, exports, folders }: {
  registry: RouteRegistry; db: Db; exports: Exports;
  /** The folder names of a mailbox (made first if it has none). */
  folders(mailboxId: number): Promise<string[]>;
}) {
  registry.add<unknown, ExportQuery, MailboxParams>({
    method: 'get', path: '/v1/mailboxes/{email}/export',
    summary: 'Export a mailbox, streamed: one folder as mboxrd (format=mbox, folder= default INBOX) or every folder as a Maildir++ tar (format=maildir)',
    permission: 'read', query: exportQuery, params: mailboxParams, errors: [404],
    async handler(ctx, { key, query, params }) {
      const box = await ownedMailbox(db, key, params.email);
      const names = await folders(box.id);
      const safe = box.address.replace(/[^A-Za-z0-9@._-]/g, '_');
      if (query.format === 'mbox') {
        const wanted = !query.folder || query.folder.toUpperCase() === 'INBOX' ? 'INBOX' : query.folder;
        if (!names.includes(wanted)) throw notFound('Folder not found');
        ctx.set('Content-Disposition', `attachment; filename="${safe}-${wanted.replace(/[^A-Za-z0-9._-]/g, '_')}.mbox"`);
        ctx.type = 'application/mbox';
        ctx.body = exports.mbox(key.tenantId, box.id, wanted);
      } else {
        ctx.set('Content-Disposition', `attachment; filename="${safe}.tar"`);
        ctx.type = 'application/x-tar';
        ctx.body = exports.maildir(key.tenantId, box.id, names);
      }
    },
  });
}
