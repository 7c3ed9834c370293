import { readFile, unlink } from 'node:fs/promises';
import { sql, type Insertable } from 'kysely';
import type { Db } from '../../db/connection.js';
import { ApiError, unprocessable } from '../../errors.js';
import { acceptGroup, fits, type AcceptJob } from '../../mailstore/commits.js';
import { createGroupCommit, type Outcome } from '../group-commit.js';
import { createOverlappingGroupCommit } from './group-commit.js';
import { apiMessageSize, smtpTargets, type Envelope, type StoredAttachment, type StoredMessage, type Target } from '../../inbound/message.js';
import { pgBlobs, sha256Of, type BlobData } from './blobs.js';
import type { IngestStore } from '../../mailstore/inbound-store.js';
import type { InboundTable } from '../../db/tables/ingest.js';
import type { InboundMessage, RawDelivery, RecipientResolver } from '../../inbound/types.js';

/** The advisory lock key of API group commits ('inbx'): message_id reservations are checked, then written. */
const ACCEPT_LOCK = 0x696e6278;

/** API mail in a group commit, with its attachment bytes. */
type ApiJob = { job: AcceptJob; blobs: BlobData[] };

/**
 * SMTP groups committed at once (pg-group-commit.ts): each holds a pooled connection while its
 * INSERT commits, so this stays well under the pool's size, which storing and the API share.
 */
const SMTP_GROUPS_IN_FLIGHT = 3;

/** Raw bytes bound to one INSERT of SMTP queue rows. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/** Locks mailbox rows in id order, so transactions that update several never wait on each other in a cycle. */
export const lockMailboxes = (trx: Db, ids: Iterable<number>) => {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  return sorted.length === 0 ? Promise.resolve()
    : sql`SELECT id FROM mailboxes WHERE id = ANY(${sorted}::bigint[]) ORDER BY id FOR UPDATE`.execute(trx).then(() => undefined);
};

/**
 * The accepting half of ingestion on PostgreSQL (DECISIONS.md section 17): the acknowledgement is
 * a group commit in PostgreSQL instead of the acceptance journal. Messages that arrive in one turn
 * of the event loop share a commit (SMTP groups overlap up to SMTP_GROUPS_IN_FLIGHT, API groups
 * take turns), committed on this node's pool: SMTP mail as
 * queue rows with the raw bytes in `inbound.raw` whatever their size, API mail (in groups of its
 * own) with its message_id reservations, quota usage and attachment blobs. A caller resolves once
 * its rows committed, and a PostgreSQL commit is durable when it returns; the worker
 * (pg-worker.ts) stores the copies afterwards, on whichever node claims the rows.
 */
export function createPgAcceptor(deps: {
  db: Db; store: IngestStore; resolve: RecipientResolver; now(): number;
  /** After each committed group, with the number of SMTP rows in it (the worker looks for the new rows). */
  onCommitted(smtpRows: number, apiRows?: number): void;
}) {
  const { db, store, resolve } = deps;

  /**
   * API mail: one transaction per group. Reservations are checked, then written, so API groups of
   * every node take turns (an advisory lock); blob rows are written before mailbox rows are locked,
   * the order the storing worker takes them in too (pg-worker.ts).
   */
  async function commitApi(jobs: ApiJob[]): Promise<Outcome<void>[]> {
    const now = deps.now();
    const outcomes = await db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${ACCEPT_LOCK})`.execute(trx);
      await pgBlobs.save(trx, jobs.flatMap((j) => j.blobs), now);
      await lockMailboxes(trx, jobs.flatMap((j) => j.job.target.mailboxIds));
      return acceptGroup(trx, store, jobs.map((j) => j.job), now);
    });
    deps.onCommitted(0, outcomes.filter((o) => o.ok).length);
    return outcomes.map((o): Outcome<void> => (o.ok ? { ok: true, value: undefined } : { ok: false, error: new ApiError(o.status, o.reason) }));
  }

  /**
   * SMTP mail: queue rows reserve and check nothing, so a group is one multi-row INSERT without an
   * explicit transaction (a statement commits alone: one round trip instead of four), in chunks of
   * bounded bytes; a chunk that fails refuses only its own messages (451: the senders retry).
   */
  async function commitSmtp(rows: Insertable<InboundTable>[]): Promise<Outcome<void>[]> {
    const out: Outcome<void>[] = [];
    let committed = 0;
    for (let start = 0; start < rows.length;) {
      let end = start;
      let bytes = 0;
      while (end < rows.length && (end === start || bytes + (rows[end].raw?.length ?? 0) <= CHUNK_BYTES)) bytes += rows[end++].raw?.length ?? 0;
      try {
        await db.insertInto('inbound').values(rows.slice(start, end)).execute();
        for (let i = start; i < end; i++) out.push({ ok: true, value: undefined });
        committed += end - start;
      } catch (error) {
        for (let i = start; i < end; i++) out.push({ ok: false, error });
      }
      start = end;
    }
    if (committed > 0) deps.onCommitted(committed);
    return out;
  }

  const apiGroup = createGroupCommit(commitApi);
  const smtpGroup = createOverlappingGroupCommit(commitSmtp, { inFlight: SMTP_GROUPS_IN_FLIGHT, maxBatch: 256 });

  return {
    /** API path: as acceptor.acceptMessage (accept.ts), with the attachment bytes committed as blob rows in the group. */
    async acceptMessage(tenantId: number, msg: InboundMessage): Promise<void> {
      const resolution = await resolve(msg.toEmail);
      if (resolution.kind !== 'deliver' || resolution.tenantId !== tenantId) {
        throw unprocessable('to_email is not a mailbox or alias of this account');
      }
      const blobs: BlobData[] = [];
      const attachments: StoredAttachment[] = [];
      for (const a of msg.attachments) {
        const data = Buffer.isBuffer(a.content) ? a.content : await readFile(a.content.spooled);
        const sha256 = sha256Of(data);
        blobs.push({ sha256, data });
        attachments.push({ filename: a.filename, contentType: a.contentType, size: data.length, sha256, contentId: a.contentId ?? null, disposition: a.disposition ?? 'attachment' });
      }
      const message: StoredMessage = { ...msg, attachments };
      const target: Target = { tenantId, mailboxIds: [...new Set(resolution.mailboxIds)], forwards: [...new Set(resolution.forwards)], address: msg.toEmail };
      await apiGroup.submit({ job: { messageJson: JSON.stringify(message), messageId: message.messageId, target, size: apiMessageSize(message) }, blobs });
    },

    /** SMTP path: the raw bytes and the envelope as a queue row, committed with the group before the 250. */
    async acceptRaw(delivery: RawDelivery): Promise<void> {
      const { raw: source, recipients, filed, external, ...rest } = delivery;
      const envelope: Envelope = { ...rest, recipients: recipients.map((r) => r.address) };
      try {
        const raw = 'chunks' in source ? Buffer.concat(source.chunks, source.length) : await readFile(source.path);
        await smtpGroup.submit({
          kind: 'smtp', message: JSON.stringify(envelope), targets: JSON.stringify(smtpTargets(recipients, filed, external)), raw, raw_path: null,
          size: delivery.size, error: null, created_at: deps.now(), done_at: null,
        });
      } finally {
        // A spooled message was only this node's scratch copy: its bytes are in the database now (or refused).
        if (!('chunks' in source)) await unlink(source.path).catch(() => undefined);
      }
    },

    /** The mailboxes among these that are at or over their quota (for an SMTP 452 at RCPT). */
    async overQuota(mailboxIds: number[], size = 1): Promise<number[]> {
      const rows = await store.quotas(db, [...new Set(mailboxIds)]);
      return rows.filter((q) => !fits(q, size)).map((q) => q.id);
    },
  };
}
