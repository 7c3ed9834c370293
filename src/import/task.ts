import { createReadStream, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import type { FolderMessages } from '../emails/folders/index.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import { TaskInterrupted, type Task, type TaskHandler } from '../tasks/types.js';
import { sourceAddress, RefusedHostError } from './host.js';
import { importImap } from './imap.js';
import { readMaildirTar } from './maildir-tar.js';
import { readMbox } from './mbox.js';
import { createProgress, type ImportResults } from './progress.js';
import { unseal } from './sealed.js';
import { createImportSink, ImportOverQuota, type FolderSink } from './sink.js';

/** The one task kind of imports; GET /v1/get/import polls it. */
export const IMPORT_KIND = 'mailbox.import';
/** Imports run in a lane of their own, so a long one never holds up provisioning. */
export const IMPORT_LANE = 'import';

/** An import task's payload: the mailbox, and where its mail comes from. */
export type ImportPayload = { mailbox_id: number; address: string } & (
  | { source: 'imap'; host: string; port?: number; security: 'tls' | 'starttls' | 'none'; tls_verify: boolean; username: string; folders?: string[]; password_sealed?: string }
  | { source: 'mbox'; file: string; folder: string }
  | { source: 'maildir'; file: string }
);

/**
 * The import task (DECISIONS.md section 20). All the work happens in `prepare`, outside the
 * queue's transaction: each batch of messages commits with the task's progress, so a crash or a
 * stop loses at most a batch, and the resumed task skips what is there. When the task ends,
 * whichever way, its sealed password and its uploaded file are deleted; only a stop of the
 * process (TaskInterrupted) keeps them for the run that resumes it.
 */
export function importTaskHandler(deps: {
  db: Db; messages: FolderMessages; hostname: string; secret: Buffer; allowPrivate: boolean; logger: Logger;
  /** Aborted when the process stops. */
  signal: AbortSignal;
}): TaskHandler<ImportPayload, ImportResults> {
  const { db, logger } = deps;

  async function forget(on: Db, task: Task<ImportPayload>): Promise<void> {
    const p = task.payload;
    if (p.source === 'imap') {
      const { password_sealed: _gone, ...rest } = p;
      await sql`UPDATE tasks SET payload = ${JSON.stringify(rest)} WHERE id = ${task.id}`.execute(on);
    } else {
      await rm(p.file, { force: true });
    }
  }

  async function work(task: Task<ImportPayload>): Promise<ImportResults> {
    const p = task.payload;
    if (task.tenantId === null) throw new ApiError(422, 'Import task without a tenant');
    const progress = createProgress(task.results as Partial<ImportResults> | null);
    const sink = createImportSink({ db, messages: deps.messages, hostname: deps.hostname, tenantId: task.tenantId, mailboxId: p.mailbox_id, taskId: task.id, progress });
    await progress.save(db, task.id);
    if (p.source !== 'imap' && !existsSync(p.file)) {
      throw new ApiError(422, 'The uploaded file is not in this node\'s data directory (several nodes must share <data dir>/imports/)');
    }
    if (p.source === 'imap') {
      if (!p.password_sealed) throw new ApiError(422, 'The source password is no longer kept; start the import again');
      let address: string;
      try {
        address = await sourceAddress(p.host, deps.allowPrivate);
      } catch (err) {
        if (err instanceof RefusedHostError) throw new ApiError(422, err.message);
        throw err;
      }
      await importImap({
        host: p.host, address, port: p.port, security: p.security, tlsVerify: p.tls_verify, username: p.username,
        password: unseal(deps.secret, p.password_sealed), folders: p.folders,
      }, { folder: sink.folder, progress, signal: deps.signal });
    } else if (p.source === 'mbox') {
      progress.plan(1, null);
      const folder = await sink.folder(p.folder);
      for await (const m of readMbox(createReadStream(p.file, { highWaterMark: 256 * 1024 }))) {
        await folder.add(m.raw, m.flags, m.receivedAt);
        if (deps.signal.aborted) break;
      }
      if (!deps.signal.aborted) await folder.flush();
    } else {
      const folders = new Map<string, FolderSink>();
      let current = null as FolderSink | null;
      for await (const m of readMaildirTar(createReadStream(p.file, { highWaterMark: 256 * 1024 }))) {
        if (current?.name !== m.folder) {
          await current?.flush();
          current = folders.get(m.folder) ?? null;
          if (!current) { current = await sink.folder(m.folder); folders.set(m.folder, current); progress.addFolder(); }
        }
        await current.add(m.raw, m.flags, m.receivedAt);
        if (deps.signal.aborted) break;
      }
      if (!deps.signal.aborted) await current?.flush();
    }
    if (deps.signal.aborted) throw new TaskInterrupted('stopping');
    return progress.results('completed');
  }

  return {
    kind: IMPORT_KIND,
    lane: IMPORT_LANE,
    attempts: 1,
    async prepare(task) {
      try {
        return await work(task);
      } catch (err) {
        if (err instanceof TaskInterrupted || deps.signal.aborted) throw new TaskInterrupted('stopping');
        await forget(db, task);
        if (err instanceof ApiError) throw err;
        if (err instanceof ImportOverQuota) throw new ApiError(422, err.message);
        logger.warn({ err, task_id: task.id }, 'import failed');
        throw new ApiError(422, `Import failed: ${(err as Error).message}`);
      }
    },
    async run(trx, task, results) {
      await forget(trx, task);
      return { totalEmail: results.messages_imported, results };
    },
  };
}
