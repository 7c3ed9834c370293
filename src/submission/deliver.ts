import { randomUUID } from 'node:crypto';
import type { Core } from '../core.js';
import { createGroupCommit, type Outcome } from '../ingest/group-commit.js';
import type { Resolution } from '../inbound/types.js';
import type { Ingest } from '../ingest/ports.js';
import { DKIM_SELECTOR } from '../signing/dkim-keys.js';
import type { OutboundStore } from '../mailstore/outbound-store.js';
import { receivedHeader, returnPathHeader } from '../smtp/received.js';
import type { DailyLedger } from './daily.js';
import { RAW_IN_ROW_BYTES } from '../ingest/accept.js';
import { signDkim } from '../signing/sign.js';
import { createKeyCache } from '../signing/keys.js';
import { splitHeaderBlock } from '../message/headers.js';
import type { QueueJob } from '../mailstore/submissions.js';
import type { SenderMailbox } from '../mailstore/submission-store.js';

/** A recipient of a submission with where it goes: a hosted delivery, or out through the queue. */
export interface SubmissionRecipient {
  address: string;
  resolution: Extract<Resolution, { kind: 'deliver' }> | { kind: 'not-hosted' };
}

/** One message to send, checked (sender, recipients) and with Message-ID and Date in place. */
export interface Submission {
  tenantId: number;
  /** The mailbox that sends: its Sent folder keeps the copy and its daily count grows. Null: an alias with no hosted mailbox in its goto. */
  sender: SenderMailbox | null;
  mailFrom: string;
  /** The From: domain, whose DKIM key signs (d=). */
  fromDomain: string;
  recipients: SubmissionRecipient[];
  raw: Buffer;
  /** Where it came from, for the Received: header of hosted copies. */
  trace: { remoteAddress: string; heloName: string; protocol: string; tls: boolean };
}

/** The sender's mailbox has no room for the Sent copy: nothing was sent. */
export class SenderFullError extends Error {}
/** The sender's mailbox reached its daily limit meanwhile (another session's message took the rest): nothing was sent. */
export class DailyLimitError extends Error {}

/** How long a domain's DKIM key (PEM) is reused before it is read again: a rotation applies within this. */
const KEY_REUSE_MS = 5_000;

/**
 * The one path of submitted mail, SMTP and API alike (DECISIONS.md section 13): one DKIM signature
 * d=<From domain> s=mailstead on mail that leaves; the hosted recipients, the copy in the sender's
 * Sent folder (read, no email.received), the external recipients and the daily count as ONE record
 * of ingest's acceptance journal, as port 25 mail with its forwards is: parsed once in the parser
 * thread, without SPF/DKIM/DMARC checks (the sender logged in), and stored in the storage thread's
 * batches as several copies (the Sent copy without the fields put in front for delivery), the
 * external recipients' 'submission' items and their signed bytes in the same transaction
 * (commit.ts queueExternalOfRecord). So a message waits for one journal write, no database commit,
 * before the client hears 250 or 200, and nothing parses it on this thread. Only a message too
 * large to live in its record, or one with neither a Sent copy nor a hosted recipient, has its
 * items committed first, in group commits of the storage thread (commitSubmissions). PostgreSQL
 * takes the same shape: the record is a queue row of pg-accept's group commit (one commit before
 * the 250), stored by pg-worker through the same deliverBatch, which queues the items; its two-step
 * path is PostgreSQL's commitSubmissions, in one transaction of the pool.
 */
export function createSubmissionPath(core: Core, deps: {
  ingest: Ingest;
  outbound: OutboundStore;
  ledger: DailyLedger;
  wakeOutbound: () => void;
}) {
  const { db, clock, config, logger } = core;
  const keyFor = createKeyCache();
  const pems = new Map<string, { pem: string | null; at: number }>();

  /** The domain's DKIM key, read from the database at most every KEY_REUSE_MS (one query per message cost the SMTP thread). */
  async function pemOf(domain: string): Promise<string | null> {
    const known = pems.get(domain);
    if (known && performance.now() - known.at < KEY_REUSE_MS) return known.pem;
    const pem = (await deps.outbound.dkimKey(db, domain)) ?? null;
    pems.set(domain, { pem, at: performance.now() });
    return pem;
  }

  /**
   * Signs with the From domain's key (the RSA operation on libuv's pool, src/signing); a domain
   * without a key (none of ours lacks one) goes unsigned. The signature is prepended: the message
   * as written stays the tail of the signed bytes.
   */
  async function sign(raw: Buffer, domain: string, now: number): Promise<Buffer> {
    const pem = await pemOf(domain);
    if (!pem) {
      logger.warn({ domain }, 'submission from a domain without a DKIM key: sent unsigned');
      return raw;
    }
    return signDkim(raw, { domain, selector: DKIM_SELECTOR, privateKey: keyFor(domain, pem) }, new Date(now));
  }

  // Concurrent sessions' submissions share one transaction (and one WAL sync) in the storage thread.
  const queue = createGroupCommit(async (jobs: QueueJob[]): Promise<Outcome<number | null>[]> =>
    (await deps.ingest.commitSubmissions(jobs)).map((ref) => ({ ok: true, value: ref })));

  return async function submit(s: Submission): Promise<void> {
    const now = clock.now();
    const external = s.recipients.filter((r) => r.resolution.kind === 'not-hosted').map((r) => r.address);
    const hosted = s.recipients.flatMap((r) => (r.resolution.kind === 'deliver' ? [{ address: r.address, resolution: r.resolution }] : []));
    if (s.sender && (await deps.ingest.overQuota([s.sender.id], s.raw.length)).length > 0) throw new SenderFullError('no room for the Sent copy');
    const reservation = s.sender ? await deps.ledger.reserve(s.sender.id, s.recipients.length) : { release() {} };
    if (!reservation) throw new DailyLimitError('daily limit reached');
    let committedFirst = false;
    try {
      // Signed when it leaves: to external recipients, or forwarded by a hosted alias (the receiver's
      // DMARC needs this signature: the forwarder's own does not align with From:). Hosted delivery
      // checks nothing of submitted mail, so mail that stays here goes unsigned. One signature serves every copy.
      const leaves = external.length > 0 || hosted.some((h) => h.resolution.forwards.length > 0);
      const signed = leaves ? await sign(s.raw, s.fromDomain, now) : s.raw;
      const signature = signed.subarray(0, signed.length - s.raw.length);
      const head = hosted.length === 0 ? null : Buffer.from(returnPathHeader(s.mailFrom) + receivedHeader({
        heloName: s.trace.heloName, clientHostname: s.trace.heloName, remoteAddress: s.trace.remoteAddress, hostname: config.hostname,
        protocol: s.trace.protocol, id: randomUUID(), tlsCipher: null, recipients: hosted.map((h) => h.address), at: now,
      }), 'latin1');
      // The external recipients ride in the one journal record when there is one whose bytes live in
      // it (the hosted copies', else the Sent copy's): queued as it is stored, so the 250 waits for one
      // journal write. A message too large for that, or from an alias with no hosted mailbox to
      // nobody hosted, has its items committed first and named by the Sent copy (outboundRef).
      const recordBytes = head ? head.length + signed.length : signed.length;
      const viaRecord = external.length > 0 && (head !== null || s.sender !== null) && recordBytes <= RAW_IN_ROW_BYTES;
      const carried = viaRecord ? { tenantId: s.tenantId, recipients: external, skip: head?.length ?? 0 } : undefined;
      let outboundRef: number | null = null;
      if (external.length > 0 && !viaRecord) {
        outboundRef = await queue.submit({
          tenantId: s.tenantId, mailFrom: s.mailFrom, external, signed, recipients: s.recipients.length, at: now,
          // A ledger that counts on reserving (PostgreSQL's) has written the count already.
          senderId: deps.ledger.countsOnReserve ? null : s.sender?.id ?? null,
        });
        committedFirst = true;
      }
      const base = {
        mailFrom: s.mailFrom, remoteAddress: s.trace.remoteAddress, heloName: s.trace.heloName, tls: s.trace.tls, receivedAt: now, authenticated: true,
      };
      // Unless the queue's commit wrote it, the daily count is committed with the Sent copy (the
      // record carries it), or the ledger wrote it on reserving (PostgreSQL's).
      const counted = outboundRef === null && !deps.ledger.countsOnReserve;
      const filed = s.sender ? {
        tenantId: s.sender.tenantId, mailboxId: s.sender.id, address: s.sender.address, folder: 'Sent', outboundRef,
        ...(counted ? { sends: { recipients: s.recipients.length, at: now } } : {}),
      } : undefined;
      // The hosted copies and the Sent copy share one record when the message lives in the record itself (RAW_IN_ROW_BYTES).
      const size = head ? head.length + signed.length : 0;
      const shared = head !== null && filed !== undefined && size <= RAW_IN_ROW_BYTES;
      const work: Promise<unknown>[] = [];
      if (head) {
        const front = Buffer.concat([head, signature]);
        const omit = { bytes: front.length, headers: splitHeaderBlock(front).lines.map((l) => l.key) };
        work.push(deps.ingest.acceptRaw({
          ...base, raw: { chunks: [head, signed], length: size }, size, recipients: hosted, ...(shared ? { filed: { ...filed, omit } } : {}),
          ...(carried ? { external: carried } : {}),
        }));
      }
      if (filed && !shared) {
        // A Sent copy's record that carries the external recipients holds the signed bytes (what
        // leaves); the copy keeps the message as written, without the signature in front.
        const alone = carried !== undefined && !head;
        const raw = alone ? signed : s.raw;
        const omit = alone && signature.length > 0 ? { omit: { bytes: signature.length, headers: splitHeaderBlock(signature).lines.map((l) => l.key) } } : {};
        work.push(deps.ingest.acceptRaw({
          ...base, raw: { chunks: [raw], length: raw.length }, size: raw.length, recipients: [], filed: { ...filed, ...omit }, ...(alone ? { external: carried } : {}),
        }));
      }
      await Promise.all(work);
    } catch (err) {
      reservation.release();
      throw err;
    }
    // Items committed before the record (the rare path) wait for no storage batch; the others wake
    // the outbound worker as their batch commits (ingest's onForwardsQueued).
    if (committedFirst) deps.wakeOutbound();
  };
}
export type SubmitMessage = ReturnType<typeof createSubmissionPath>;
