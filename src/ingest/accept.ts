import { ApiError, unprocessable } from '../errors.js';
import type { Db } from '../db/connection.js';
import type { BlobStore } from './blobs.js';
import { fits, type AcceptJob } from '../mailstore/commits.js';
import { createGroupCommit, type Outcome } from './group-commit.js';
import { apiMessageSize, smtpTargets, type Envelope, type StoredMessage, type Target } from '../inbound/message.js';
import { storeAttachments } from './blobs.js';
import type { Journal } from './journal.js';
import type { StorageThread } from '../mailstore/sqlite/storage-thread.js';
import type { IngestStore } from '../mailstore/inbound-store.js';
import type { InboundMessage, RawDelivery, RecipientResolver } from '../inbound/types.js';

/** Raw messages up to this size live in their journal record and queue row, so one fsync per group commit covers them. */
export const RAW_IN_ROW_BYTES = 256 * 1024;

/**
 * The accepting half of ingestion: checks recipients, makes attachment blobs and large raw files
 * durable, and commits API mail as queue rows in group commits (one transaction in the storage
 * thread and one fsync for every message that arrived meanwhile) and SMTP mail as records of the
 * acceptance journal (journal.ts); each caller resolves only once its message is durable.
 */
export function createAcceptor(deps: {
  db: Db; store: IngestStore; blobs: BlobStore; resolve: RecipientResolver; thread: StorageThread; journal: Journal; now(): number;
  /** After an API group commit, with the number of messages it queued. */
  onCommitted(rows: number): void;
  /** After SMTP mail was journaled. */
  onJournaled(): void;
  /** Milliseconds to hold SMTP mail back before journaling it, while storage is far behind (worker.ts). */
  inflowDelayMs?(): number;
}) {
  const { db, store, blobs, resolve, thread } = deps;

  async function commit(jobs: AcceptJob[]): Promise<Outcome<void>[]> {
    const outcomes = await thread.accept(jobs);
    deps.onCommitted(outcomes.filter((o) => o.ok).length);
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
      await group.submit({ messageJson: JSON.stringify(message), messageId: message.messageId, target, size: apiMessageSize(message) });
    },

    /**
     * SMTP path: makes the raw bytes durable in the acceptance journal (large ones in a file of
     * their own, which the record names); the worker moves the record into the queue.
     */
    async acceptRaw(delivery: RawDelivery): Promise<void> {
      const { raw: source, recipients, filed, external, ...rest } = delivery;
      const envelope: Envelope = { ...rest, recipients: recipients.map((r) => r.address) };
      let raw: Buffer[] | null = null;
      let rawPath: string | null = null;
      if ('chunks' in source) {
        if (source.length <= RAW_IN_ROW_BYTES) raw = source.chunks;
        else rawPath = await blobs.putRaw(Buffer.concat(source.chunks, source.length));
      } else {
        rawPath = await blobs.adoptRaw(source.path);
      }
      // Before the journal, so a sender held back has no 250 yet and retries should we stop meanwhile.
      const delay = deps.inflowDelayMs?.() ?? 0;
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      try {
        await deps.journal.append({
          envelopeJson: JSON.stringify(envelope), targetsJson: JSON.stringify(smtpTargets(recipients, filed, external)), size: delivery.size, rawPath, acceptedAt: deps.now(),
        }, raw);
      } catch (err) {
        if (rawPath) await blobs.remove(blobs.rawFile(rawPath));
        throw err;
      }
      deps.onJournaled();
    },

    /** The mailboxes among these that are at or over their quota (for an SMTP 452 at RCPT). */
    async overQuota(mailboxIds: number[], size = 1): Promise<number[]> {
      const rows = await store.quotas(db, [...new Set(mailboxIds)]);
      return rows.filter((q) => !fits(q, size)).map((q) => q.id);
    },
  };
}
export type Acceptor = ReturnType<typeof createAcceptor>;
