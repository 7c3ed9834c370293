import { sql, type Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import { dml } from '../db/backend.js';
import { createOutboundStore, type OutboundStore } from './outbound-store.js';
import type { OutboundTable } from '../db/tables/outbound.js';
import { submissionStore } from './submission-store.js';

/** What one submission commits to the database: its external recipients' queue items (with the signed bytes) and its daily count. */
export interface QueueJob {
  tenantId: number;
  mailFrom: string;
  /** External recipients; none: only the count is written. */
  external: string[];
  /** The signed message the items send (empty without external recipients). */
  signed: Uint8Array;
  /** The sending mailbox whose daily count grows, or null. */
  senderId: number | null;
  recipients: number;
  at: number;
}

/**
 * The transaction body of a group of submissions, run by the mailstore's storage thread (the one writer
 * of the mail path, so the thread that answers SMTP never waits for SQLite's write lock): each
 * job's queued bytes and 'submission' items, answering the bytes' reference (null without external
 * recipients), then every job's daily count in one statement.
 */
export async function commitSubmissions(trx: Db, outbound: OutboundStore, jobs: QueueJob[], now: number): Promise<Array<number | null>> {
  const refs: Array<number | null> = [];
  for (const j of jobs) {
    if (j.external.length === 0) { refs.push(null); continue; }
    const ref = await outbound.putMessage(trx, Buffer.from(j.signed.buffer, j.signed.byteOffset, j.signed.byteLength), j.at);
    const rows: Insertable<OutboundTable>[] = j.external.map((rcpt) => ({
      tenant_id: j.tenantId, kind: 'submission', email_id: null, inbound_id: null, message_ref: ref, mail_from: j.mailFrom,
      rcpt_to: rcpt, via_domain: null, auth: null, next_attempt_at: j.at, last_response: null, created_at: j.at, updated_at: j.at,
    }));
    await outbound.insert(trx, rows);
    refs.push(ref);
  }
  await submissionStore.recordSends(trx, jobs.flatMap((j) => (j.senderId !== null ? [{ mailbox_id: j.senderId, recipients: j.recipients, at: j.at }] : [])), now);
  return refs;
}

/** A stored record's external recipients of a submission, as the storage transaction queues them. */
export interface ExternalOfRecord {
  /** The queue row whose raw bytes the record became (its bytes after `skip` are what leaves). */
  inboundId: number;
  tenantId: number;
  mailFrom: string;
  recipients: string[];
  skip: number;
  /** The Sent copy stored from the same record, or null (no sending mailbox, or it was deleted meanwhile). */
  emailId: number | null;
}

/**
 * Queues a submission's external recipients from inside the transaction that stores its journal
 * record (mailstore/pipeline.ts deliverBatch), as forwards are: the bytes to send are copied from the queue row
 * inside the database (never crossing into JavaScript), then a 'submission' item per recipient.
 * The row is stored once, so a record replayed after a crash queues its recipients once. Answers
 * the number of items.
 */
export async function queueExternalOfRecord(trx: Db, x: ExternalOfRecord, now: number): Promise<number> {
  const tail = dml(trx).tail(sql.ref('raw'), x.skip + 1);
  const row = await sql<{ id: number }>`INSERT INTO outbound_messages (raw, created_at) SELECT ${tail}, ${now} FROM inbound WHERE id = ${x.inboundId} AND raw IS NOT NULL RETURNING id`
    .execute(trx);
  const ref = row.rows[0]?.id;
  // Only records with their bytes in the row carry external recipients (submission/deliver.ts).
  if (ref === undefined) throw new Error(`inbound row ${x.inboundId} has no raw bytes for its external recipients`);
  // One statement for every recipient (their ids are not needed here).
  await trx.insertInto('outbound').values(x.recipients.map((rcpt): Insertable<OutboundTable> => ({
    tenant_id: x.tenantId, kind: 'submission', email_id: x.emailId, inbound_id: null, message_ref: Number(ref), mail_from: x.mailFrom,
    rcpt_to: rcpt, via_domain: null, auth: null, next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
  }))).execute();
  return x.recipients.length;
}

/**
 * commitSubmissions in a transaction of its own on `db` (PostgreSQL: one per group of submission's
 * group commit, submission/deliver.ts, durable when the commit returns). SQLite runs the same body
 * on the storage thread (sqlite/storage-worker.ts).
 */
export function poolSubmissions(db: Db, now: () => number): (jobs: QueueJob[]) => Promise<Array<number | null>> {
  const outbound = createOutboundStore();
  return (jobs) => db.transaction().execute((trx) => commitSubmissions(trx, outbound, jobs, now()));
}
