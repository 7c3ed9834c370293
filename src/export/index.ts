import type { Core } from '../core.js';
import type { Emails } from '../emails/index.js';
import type { FolderMessages } from '../emails/folders/index.js';
import { exportRoutes } from './routes.js';
import { createExports } from './stream.js';

/** Taking mail out (DECISIONS.md section 20): a folder as mbox or the mailbox as a Maildir++ tar, streamed. */
export function installExport(core: Core, deps: { emails: Emails; messages: FolderMessages }): void {
  const { db, config, registry } = core;
  exportRoutes({
    registry, db, exports: createExports({ db, files: deps.emails.files, hostname: config.hostname }),
    folders: async (mailboxId) => (await deps.messages.folders(mailboxId)).map((f) => f.name),
  });
}
