import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import type { AppendInput, FolderMessages } from '../emails/folders/index.js';
import { parseAppended } from '../imap/mailstore.js';
import type { Progress } from './progress.js';

/** A batch is stored in one transaction once it holds this many messages or bytes. */
const BATCH_MESSAGES = 100;
const BATCH_BYTES = 8 * 1024 * 1024;

/** The quota of the mailbox has no room for the next message: what came before it is kept. */
export class ImportOverQuota extends Error {}

/** What identifies a message within a folder for an import: Message-ID, date and size. */
export const messageKey = (messageId: string, receivedAt: number, size: number) => `${messageId.trim()}\n${receivedAt}\n${size}`;

/**
 * Where every import source stores its messages: the APPEND path of the folder view
 * (emails/folders/ appendMany: no email.received, no filter, counted toward the quota), in
 * batches, skipping what the folder already holds (same Message-ID, date and size), each batch
 * committed with the task's progress.
 */
export function createImportSink({ db, messages, hostname, tenantId, mailboxId, taskId, progress }: {
  db: Db; messages: FolderMessages; hostname: string; tenantId: number; mailboxId: number; taskId: number; progress: Progress;
}) {
  let defaultsMade = false;

  async function folder(name: string) {
    if (!defaultsMade) { await messages.folders(mailboxId); defaultsMade = true; }
    if (!(await messages.folder(mailboxId, name))) await messages.createFolder(mailboxId, name);
    const rows = await sql<{ message_id: string; received_at: number; size: number }>`SELECT message_id, received_at, size FROM emails
      WHERE mailbox_id = ${mailboxId} AND folder = ${name} AND deleted_at IS NULL`.execute(db);
    const known = new Set(rows.rows.map((r) => messageKey(r.message_id, Number(r.received_at), Number(r.size))));
    let batch: AppendInput[] = [];
    let batchBytes = 0;

    async function flush(): Promise<void> {
      if (batch.length === 0) { await progress.save(db, taskId); return; }
      const list = batch;
      batch = [];
      batchBytes = 0;
      let bytes = 0;
      const out = await messages.appendMany(tenantId, mailboxId, name, list, async (trx, stored) => {
        bytes = list.slice(0, stored).reduce((n, m) => n + m.raw.length, 0);
        progress.imported(stored, bytes);
        await progress.save(trx, taskId);
      });
      if (out.overQuota) throw new ImportOverQuota(`Mailbox is over its quota: ${progress.results().messages_imported} messages imported before it was full`);
    }

    return {
      name,
      /** Whether the folder already holds a message with this Message-ID, date and size. */
      has: (messageId: string | null | undefined, receivedAt: number, size: number) => !!messageId && known.has(messageKey(messageId, receivedAt, size)),
      /**
       * Adds a message (stored with the next batch) unless the folder holds it. Mail without a
       * Message-ID gets one made from its bytes, so importing it again finds it too.
       */
      async add(raw: Buffer, flags: string[], receivedAt: number): Promise<void> {
        progress.seen();
        const fallback = `<${createHash('sha256').update(raw).digest('hex').slice(0, 32)}@import.${hostname}>`;
        const input = await parseAppended(raw, flags, receivedAt, hostname, fallback);
        const key = messageKey(input.messageId, receivedAt, raw.length);
        if (known.has(key)) { progress.skipped(); return; }
        known.add(key);
        batch.push(input);
        batchBytes += raw.length;
        if (batch.length >= BATCH_MESSAGES || batchBytes >= BATCH_BYTES) await flush();
      },
      flush,
    };
  }
  return { folder };
}
export type FolderSink = Awaited<ReturnType<ReturnType<typeof createImportSink>['folder']>>;
