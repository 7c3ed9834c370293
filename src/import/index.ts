import { join } from 'node:path';
import type { Core } from '../core.js';
import type { FolderMessages } from '../emails/folders/index.js';
import { importRoutes } from './routes.js';
import { createImportService } from './service.js';
import { importTaskHandler } from './task.js';

/**
 * Moving in and out (DECISIONS.md section 20): the import task (IMAP, mbox and Maildir uploads)
 * storing through the APPEND path of the folder view, and its routes (export/ streams mail out).
 */
export function installImport(core: Core, deps: { messages: FolderMessages }) {
  const { db, config, queue, logger, registry } = core;
  const stopping = new AbortController();
  queue.register(importTaskHandler({
    db, messages: deps.messages, hostname: config.hostname, secret: core.installSecret, allowPrivate: config.importAllowPrivate,
    logger, signal: stopping.signal,
  }));
  const imports = createImportService({ db, queue, secret: core.installSecret, allowPrivate: config.importAllowPrivate, spoolDir: join(config.dataDir, 'imports') });
  importRoutes({ registry, imports, queue });
  return {
    /** Interrupts running imports (they are queued again and resume at the next start). */
    stop() { stopping.abort(); },
  };
}
