import type { Insertable } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { conflict, unprocessable } from '../errors.js';
import type { BlobStore } from './blobs.js';
import { createGroupCommit, type Outcome } from './group-commit.js';
import { apiMessageSize, smtpTargets, type Envelope, type StoredMessage, type Target } from './message.js';
import { messageKey, type IngestStore, type MessageKey } from './store.js';
import type { InboundTable } from './tables.js';
import type { InboundMessage, RawDelivery, RecipientResolver } from './types.js';

/** Raw messages up to this size live in their queue row, so one fsync per group commit covers them. */
export const RAW_IN_ROW_BYTES = 256 * 1024;

const MB = 1024 * 1024;

/** One message waiting for the next group commit. */
type Job =
  | { kind: 'api'; tenantId: number; message: StoredMessage; target: Target; size: number }
  | { kind: 'smtp'; envelope: Envelope; targets: Target[]; raw: Buffer | null; rawPath: string | null; size: number };

/** Whether a mailbox has room for `size` more bytes under its quota (0 = unlimited). */
const fits = (m: { quota_mb: number; used_bytes: number }, size: number) => m.quota_mb <= 0 || m.used_bytes + size <= m.quota_mb * MB;

/**
 * The accepting half of ingestion: checks recipients, makes attachment blobs and large raw files
 * durable, and commits queue rows in group commits (one transaction and one fsync for every message
 * that arrived meanwhile); each caller resolves only after the commit holding its message.
 */
export function createAcceptor(deps: {
  db: Db; store: IngestStore; blobs: BlobStore; resolve: RecipientResolver; clock: Clock; onCommitted(): void; durable(): Promise<void>;
}) {
  const { db, store, blobs, resolve, clock } = deps;

  async function commit(jobs: Job[]): Promise<Outcome<void>[]> {
    const outcomes = await db.transaction().execute(async (trx) => {
      const keys: MessageKey[] = [];
      const boxes = new Set<number>();
      for (const j of jobs) {
        if (j.kind !== 'api') continue;
        for (const mailboxId of j.target.mailboxIds) { keys.push({ mailboxId, messageId: j.message.messageId }); boxes.add(mailboxId); }
      }
      const taken = await store.takenKeys(trx, keys);
      const quota = new Map((await store.quotas(trx, [...boxes])).map((q) => [q.id, q]));
      const out: Outcome<void>[] = [];
      const used = new Map<number, number>();
      const now = clock.now();
      const rows: Insertable<InboundTable>[] = [];
      const reservations: Array<{ keys: MessageKey[]; row: number }> = [];
      for (const j of jobs) {
        if (j.kind === 'smtp') {
          rows.push({
            kind: 'smtp', message: JSON.stringify(j.envelope), targets: JSON.stringify(j.targets),
            raw: j.raw, raw_path: j.rawPath, size: j.size, error: null, created_at: now, done_at: null,
          });
          out.push({ ok: true, value: undefined });
          continue;
        }
        const mine = j.target.mailboxIds.map((mailboxId) => ({ mailboxId, messageId: j.message.messageId }));
        if (mine.some((k) => taken.has(messageKey(k)))) {
          out.push({ ok: false, error: conflict('message_id already exists for this mailbox') });
          continue;
        }
        if (j.target.mailboxIds.some((id) => { const q = quota.get(id); return q !== undefined && !fits(q, j.size); })) {
          out.push({ ok: false, error: unprocessable('mailbox over quota') });
          continue;
        }
        reservations.push({ keys: mine, row: rows.length });
        rows.push({
          kind: 'api', message: JSON.stringify(j.message), targets: JSON.stringify([j.target]),
          raw: null, raw_path: null, size: j.size, error: null, created_at: now, done_at: null,
        });
        for (const k of mine) taken.add(messageKey(k));
        // Counted as soon as accepted, so a burst cannot overrun a quota before the worker stores it.
        for (const id of j.target.mailboxIds) {
          const q = quota.get(id);
          if (q) q.used_bytes += j.size;
          used.set(id, (used.get(id) ?? 0) + j.size);
        }
        out.push({ ok: true, value: undefined });
      }
      const ids = await store.insertInbound(trx, rows);
      await store.reserve(trx, reservations.flatMap((r) => r.keys.map((k) => ({ mailbox_id: k.mailboxId, message_id: k.messageId, inbound_id: ids[r.row] }))));
      for (const [id, delta] of used) await store.addUsedBytes(trx, id, delta);
      return out;
    });
    deps.onCommitted();
    return outcomes;
  }

  const group = createGroupCommit(commit, deps.durable);

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
      const attachments = await Promise.all(msg.attachments.map(async (a) => ({
        filename: a.filename, contentType: a.contentType, size: a.content.length,
        sha256: await blobs.putBlob(a.content), contentId: a.contentId ?? null, disposition: a.disposition ?? 'attachment',
      })));
      const message: StoredMessage = { ...msg, attachments };
      const target: Target = { tenantId, mailboxIds: [...new Set(resolution.mailboxIds)], forwards: [...new Set(resolution.forwards)], address: msg.toEmail };
      await group.submit({ kind: 'api', tenantId, message, target, size: apiMessageSize(message) });
    },

    /** SMTP path: makes the raw bytes durable (row or file) and commits the queue row. */
    async acceptRaw(delivery: RawDelivery): Promise<void> {
      const { raw: source, recipients, ...rest } = delivery;
      const envelope: Envelope = { ...rest, recipients: recipients.map((r) => r.address) };
      let raw: Buffer | null = null;
      let rawPath: string | null = null;
      if ('buffer' in source) {
        if (source.buffer.length <= RAW_IN_ROW_BYTES) raw = source.buffer;
        else rawPath = await blobs.putRaw(source.buffer);
      } else {
        rawPath = await blobs.adoptRaw(source.path);
      }
      try {
        await group.submit({ kind: 'smtp', envelope, targets: smtpTargets(recipients), raw, rawPath, size: delivery.size });
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
