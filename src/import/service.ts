import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { IncomingMessage } from 'node:http';
import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { ApiError, notFound, tooManyRequests, unprocessable } from '../errors.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { ApiKey } from '../tenants/service.js';
import { ownedMailbox } from '../mailboxes/owned.js';
import { RefusedHostError, sourceAddress } from './host.js';
import type { ImportBody } from './schemas.js';
import { seal } from './sealed.js';
import { IMPORT_KIND, type ImportPayload } from './task.js';

/** Imports one tenant may have queued or running at once, so one tenant cannot fill the import lane. */
export const MAX_IMPORTS_PER_TENANT = 2;
/** The largest upload (DECISIONS.md section 20). */
export const MAX_UPLOAD_BYTES = 10 * 1024 ** 3;

/** Starts imports: checks, seals the password, spools uploads, and enqueues the task. */
export function createImportService({ db, queue, secret, allowPrivate, spoolDir }: {
  db: Db; queue: TaskQueue; secret: Buffer; allowPrivate: boolean; spoolDir: string;
}) {
  async function underLimit(tenantId: number): Promise<void> {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM tasks WHERE kind = ${IMPORT_KIND} AND tenant_id = ${tenantId}
      AND status IN ('queued', 'running')`.execute(db);
    if (Number(r.rows[0]?.n ?? 0) >= MAX_IMPORTS_PER_TENANT) {
      throw tooManyRequests(`At most ${MAX_IMPORTS_PER_TENANT} imports may run at once for an account; wait for one to finish`, 60);
    }
  }

  const enqueue = (key: ApiKey, payload: ImportPayload) => db.transaction().execute((trx) =>
    queue.enqueue(trx, { kind: IMPORT_KIND, tenantId: key.tenantId, keyId: key.id, domain: payload.address.split('@')[1] ?? '', payload }));

  return {
    /** An IMAP import; the host is checked now (and again when the task connects). */
    async startImap(key: ApiKey, address: string, body: ImportBody): Promise<number> {
      const box = await ownedMailbox(db, key, address);
      try {
        await sourceAddress(body.host, allowPrivate);
      } catch (err) {
        if (err instanceof RefusedHostError) throw unprocessable(err.message);
        throw err;
      }
      await underLimit(key.tenantId);
      return enqueue(key, {
        mailbox_id: box.id, address: box.address, source: 'imap', host: body.host, port: body.port, security: body.security ?? 'tls',
        tls_verify: body.tls_verify ?? true, username: body.username, folders: body.folders, password_sealed: seal(secret, body.password),
      });
    },

    /**
     * An upload: streamed to a file in the data directory (never held in memory), which the task
     * reads and deletes when it ends; a restart resumes from the same file.
     */
    async startUpload(key: ApiKey, address: string, req: IncomingMessage, kind: 'mbox' | 'maildir', folder: string): Promise<number> {
      const box = await ownedMailbox(db, key, address);
      await underLimit(key.tenantId);
      const declared = Number(req.headers['content-length'] ?? NaN);
      if (declared > MAX_UPLOAD_BYTES) throw new ApiError(413, `Upload is larger than ${MAX_UPLOAD_BYTES} bytes`);
      await mkdir(spoolDir, { recursive: true, mode: 0o700 });
      const file = join(spoolDir, `${randomUUID()}.${kind === 'mbox' ? 'mbox' : 'tar'}`);
      let size = 0;
      const count = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          done(size > MAX_UPLOAD_BYTES ? new ApiError(413, `Upload is larger than ${MAX_UPLOAD_BYTES} bytes`) : null, chunk);
        },
      });
      try {
        await pipeline(req, count, createWriteStream(file, { mode: 0o600 }));
        if (size === 0) throw unprocessable('The upload is empty');
        const payload: ImportPayload = kind === 'mbox'
          ? { mailbox_id: box.id, address: box.address, source: 'mbox', file, folder }
          : { mailbox_id: box.id, address: box.address, source: 'maildir', file };
        return await enqueue(key, payload);
      } catch (err) {
        await rm(file, { force: true });
        throw err;
      }
    },
  };
}
export type ImportService = ReturnType<typeof createImportService>;
