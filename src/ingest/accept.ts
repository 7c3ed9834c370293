import { ApiError, unprocessable } from '../errors.js';
import type { Db } from '../db/connection.js';
import type { BlobStore } from './blobs.js';
import { fits, type AcceptJob } from './commits.js';
import { createGroupCommit, type Outcome } from './group-commit.js';
import { apiMessageSize, smtpTargets, storeAttachments, type Envelope, type StoredMessage, type Target } from './message.js';
import type { StorageThread } from './storage-thread.js';
import type { IngestStore } from './store.js';
import type { InboundMessage, RawDelivery, RecipientResolver } from './types.js';

/** Raw messages up to this size live in their queue row, so one fsync per group commit covers them. */
export const RAW_IN_ROW_BYTES = 256 * 1024;

/**
 * The accepting half of ingestion: checks recipients, makes attachment blobs and large raw files
 * durable, and commits queue rows in group commits (one transaction in the storage thread and one
 * fsync for every message that arrived meanwhile); each caller resolves only after the commit
 * holding its message is durable.
 */
export function createAcceptor(deps: {
  db: Db; store: IngestStore; blobs: BlobStore; resolve: RecipientResolver; thread: StorageThread; onCommitted(): void;
}) {
  const { db, store, blobs, resolve, thread } = deps;

  async function commit(jobs: AcceptJob[]): Promise<Outcome<void>[]> {
    const outcomes = await thread.accept(jobs);
    deps.onCommitted();
    return outcomes.map((o) => (o.ok ? { ok: true, value: undefined } : { ok: false, error: new ApiError(o.status, o.reason) }));
  }

  const group = createGroupCommit(commit);

  return {
    /**
     * API path: the recipient must deliver into the caller's tenant (422 otherwise), attachments
     * become durable blobs, then the queue row and the message_id reservations commit (409 for a
     * message_id stored or queued for a target mailbox, 422 over quota).
     */
    async acceptMessage(tenantId: number, msg: InboundMessage): Promise<void> {
      const resolution = await resolve(msg.toEmail);
      if (resolution.kind !== 'deliver' || resolution.tenantId !== tenantId) {
        throw unprocessable('to_email is not a mailbox or alias of this account');
      }
      const message: StoredMessage = { ...msg, attachments: await storeAttachments(msg.attachments, blobs) };
      const target: Target = { tenantId, mailboxIds: [...new Set(resolution.mailboxIds)], forwards: [...new Set(resolution.forwards)], address: msg.toEmail };
      await group.submit({ kind: 'api', messageJson: JSON.stringify(message), messageId: message.messageId, target, size: apiMessageSize(message) });
    },

    /** SMTP path: makes the raw bytes durable (row or file) and commits the queue row. */
    async acceptRaw(delivery: RawDelivery): Promise<void> {
      const { raw: source, recipients, ...rest } = delivery;
      const envelope: Envelope = { ...rest, recipients: recipients.map((r) => r.address) };
      let raw: Buffer | null = null;
      let rawPath: string | null = null;
      if ('buffer' in source) {
        // The bytes move to the storage thread whole with their ArrayBuffer (storage-thread.ts): a view
        // into a larger (pooled) buffer is first copied into one of its own.
        const b = source.buffer;
        if (b.length <= RAW_IN_ROW_BYTES) raw = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : Buffer.from(new Uint8Array(b).buffer);
        else rawPath = await blobs.putRaw(source.buffer);
      } else {
        rawPath = await blobs.adoptRaw(source.path);
      }
      try {
        await group.submit({
          kind: 'smtp', envelopeJson: JSON.stringify(envelope), targetsJson: JSON.stringify(smtpTargets(recipients)), raw, rawPath, size: delivery.size,
        });
      } catch (err) {
        if (rawPath) await blobs.remove(rawPath);
        throw err;
      }
    },

    /** The mailboxes among these that are at or over their quota (for an SMTP 452 at RCPT). */
    async overQuota(mailboxIds: number[], size = 1): Promise<number[]> {
      const rows = await store.quotas(db, [...new Set(mailboxIds)]);
      return rows.filter((q) => !fits(q, size)).map((q) => q.id);
    },
  };
}
export type Acceptor = ReturnType<typeof createAcceptor>;
