import type { Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { OutboundStore } from '../outbound/store.js';
import type { OutboundTable } from '../outbound/tables.js';
import { submissionStore } from './store.js';

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
 * The transaction body of a group of submissions, run by ingest's storage thread (the one writer
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
