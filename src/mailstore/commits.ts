import type { Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { Delivery } from '../inbound/delivery-steps.js';
import type { Target } from '../inbound/message.js';
import { messageKey, type IngestStore, type MessageKey } from './inbound-store.js';
import type { InboundTable } from '../db/tables/ingest.js';
import type { VerdictCounts } from '../spam/filing.js';
import type { EncodedMessage } from '../inbound/encoded-message.js';

const MB = 1024 * 1024;

/**
 * One message of a group commit (API mail; SMTP mail goes through the acceptance journal), as the
 * accepting side hands it to the storage thread: already serialised, so crossing threads copies
 * strings rather than object graphs.
 */
export type AcceptJob = { messageJson: string; messageId: string; target: Target; size: number };

/** A job's outcome: committed, or the API error to answer it with. */
export type AcceptOutcome = { ok: true } | { ok: false; status: 409 | 422; reason: string };

/** Whether a mailbox has room for `size` more bytes under its quota (0 = unlimited). */
export const fits = (m: { quota_mb: number; used_bytes: number }, size: number) => m.quota_mb <= 0 || m.used_bytes + size <= m.quota_mb * MB;

/**
 * The group commit's transaction body: queue rows for every job, message_id reservations for API
 * mail (409 for one stored or queued for a target mailbox), quotas counted as soon as accepted (422
 * over quota), so a burst cannot overrun a quota before the worker stores it.
 */
export async function acceptGroup(trx: Db, store: IngestStore, jobs: AcceptJob[], now: number): Promise<AcceptOutcome[]> {
  const keys: MessageKey[] = [];
  const boxes = new Set<number>();
  for (const j of jobs) {
    for (const mailboxId of j.target.mailboxIds) { keys.push({ mailboxId, messageId: j.messageId }); boxes.add(mailboxId); }
  }
  const taken = keys.length ? await store.takenKeys(trx, keys) : new Set<string>();
  const quota = new Map((await store.quotas(trx, [...boxes])).map((q) => [q.id, q]));
  const out: AcceptOutcome[] = [];
  const used = new Map<number, number>();
  const rows: Insertable<InboundTable>[] = [];
  const reservations: Array<{ keys: MessageKey[]; row: number }> = [];
  for (const j of jobs) {
    const mine = j.target.mailboxIds.map((mailboxId) => ({ mailboxId, messageId: j.messageId }));
    if (mine.some((k) => taken.has(messageKey(k)))) {
      out.push({ ok: false, status: 409, reason: 'message_id already exists for this mailbox' });
      continue;
    }
    if (j.target.mailboxIds.some((id) => { const q = quota.get(id); return q !== undefined && !fits(q, j.size); })) {
      out.push({ ok: false, status: 422, reason: 'mailbox over quota' });
      continue;
    }
    reservations.push({ keys: mine, row: rows.length });
    rows.push({ kind: 'api', message: j.messageJson, targets: JSON.stringify([j.target]), raw: null, raw_path: null, size: j.size, error: null, created_at: now, done_at: null });
    for (const k of mine) taken.add(messageKey(k));
    for (const id of j.target.mailboxIds) {
      const q = quota.get(id);
      if (q) q.used_bytes += j.size;
      used.set(id, (used.get(id) ?? 0) + j.size);
    }
    out.push({ ok: true });
  }
  const ids = await store.insertInbound(trx, rows);
  await store.reserve(trx, reservations.flatMap((r) => r.keys.map((k) => ({ mailbox_id: k.mailboxId, message_id: k.messageId, inbound_id: ids[r.row] }))));
  for (const [id, delta] of used) await store.addUsedBytes(trx, id, delta);
  return out;
}

/** A queued message ready to be stored: where its copies go and what they hold (the pipeline's Delivery). */
export type Prepared = Delivery;

/** Raw SMTP mail once parsed, as it crosses to the storage thread: the StoredMessage encoded. */
export type ParsedRaw = Omit<Prepared, 'kind' | 'message'> & { encoded: EncodedMessage };

/** A queued message that could not be prepared (parsed); `final` gives up on it. */
export interface Failure {
  id: number;
  error: string;
  final: boolean;
}

/** One batch for the storage transaction: API rows by id (read inside it), SMTP mail already parsed. */
export interface StoreInput {
  apiIds: number[];
  prepared: ParsedRaw[];
  failed: Failure[];
}

/** What a stored batch leaves to do: raw files nothing references any more (removed after the commit). */
export interface StoreResult {
  unlink: string[];
  stored: number;
  /** Outbound items queued in the same transaction: forwards, and submissions' external recipients. */
  forwarded: number;
  /** The mailboxes that got mail (their idling IMAP sessions are woken). */
  mailboxIds: number[];
  /** Spam verdicts given to the stored copies, by result (/metrics). */
  verdicts: VerdictCounts;
  /** Sieve scripts that failed (their copies kept in INBOX), for the log. */
  filterErrors?: Array<{ mailboxId: number; inboundId: number; message: string }>;
}
