import { randomUUID } from 'node:crypto';
import type { Core } from '../core.js';
import { createGroupCommit, type Outcome } from '../ingest/group-commit.js';
import type { Ingest, Resolution } from '../ingest/types.js';
import { DKIM_SELECTOR } from '../outbound/prepare.js';
import type { OutboundStore } from '../outbound/store.js';
import { receivedHeader, returnPathHeader } from '../smtp/received.js';
import type { DailyLedger } from './daily.js';
import { RAW_IN_ROW_BYTES } from '../ingest/accept.js';
import { signDkim } from '../outbound/sign.js';
import { createKeyCache } from '../signing/keys.js';
import { splitHeaderBlock } from '../smtp/mime.js';
import type { QueueJob } from './commit.js';
import type { SenderMailbox } from './store.js';

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
 * d=<From domain> s=mailstead on mail that leaves; the external recipients as 'submission' items
 * of the outbound queue with the daily count, in group commits (one transaction and one WAL sync
 * in ingest's storage thread for the submissions of every session that arrived meanwhile,
 * commit.ts); the hosted recipients and the copy in the sender's Sent folder (read, no
 * email.received) as ONE record of ingest's acceptance journal, as port 25 mail is: parsed once
 * in the parser thread, without SPF/DKIM/DMARC checks (the sender logged in), and stored as
 * several copies in the storage thread's batches (the Sent copy without the fields put in front
 * for delivery). Without external recipients the record also carries the daily count, so such a
 * message waits for one journal write and no database commit. It resolves once all of it is
 * durable, which is before the client hears 250 or 200; nothing parses the message on this thread.
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
    try {
      // Signed when it leaves: to external recipients, or forwarded by a hosted alias (the receiver's
      // DMARC needs this signature: the forwarder's own does not align with From:). Hosted delivery
      // checks nothing of submitted mail, so mail that stays here goes unsigned. One signature serves every copy.
      const leaves = external.length > 0 || hosted.some((h) => h.resolution.forwards.length > 0);
      const signed = leaves ? await sign(s.raw, s.fromDomain, now) : s.raw;
      let outboundRef: number | null = null;
      if (external.length > 0) {
        // The Sent copy names the queued bytes (so the items learn its id once stored): it waits for them.
        outboundRef = await queue.submit({
          tenantId: s.tenantId, mailFrom: s.mailFrom, external, signed, recipients: s.recipients.length, at: now,
          // A ledger that counts on reserving (PostgreSQL's) has written the count already.
          senderId: deps.ledger.countsOnReserve ? null : s.sender?.id ?? null,
        });
      }
      const base = {
        mailFrom: s.mailFrom, remoteAddress: s.trace.remoteAddress, heloName: s.trace.heloName, tls: s.trace.tls, receivedAt: now, authenticated: true,
      };
      const head = hosted.length === 0 ? null : Buffer.from(returnPathHeader(s.mailFrom) + receivedHeader({
        heloName: s.trace.heloName, clientHostname: s.trace.heloName, remoteAddress: s.trace.remoteAddress, hostname: config.hostname,
        protocol: s.trace.protocol, id: randomUUID(), tlsCipher: null, recipients: hosted.map((h) => h.address), at: now,
      }), 'latin1');
      // Without external recipients the daily count is committed with the Sent copy (the record
      // carries it), unless the ledger wrote it on reserving (PostgreSQL's).
      const filed = s.sender ? {
        tenantId: s.sender.tenantId, mailboxId: s.sender.id, address: s.sender.address, folder: 'Sent', outboundRef,
        ...(external.length === 0 && !deps.ledger.countsOnReserve ? { sends: { recipients: s.recipients.length, at: now } } : {}),
      } : undefined;
      // The hosted copies and the Sent copy share one record when the message lives in the record itself (RAW_IN_ROW_BYTES).
      const size = head ? head.length + signed.length : 0;
      const shared = head !== null && filed !== undefined && size <= RAW_IN_ROW_BYTES;
      const work: Promise<unknown>[] = [];
      if (head) {
        const front = Buffer.concat([head, signed.subarray(0, signed.length - s.raw.length)]);
        const omit = { bytes: front.length, headers: splitHeaderBlock(front).lines.map((l) => l.key) };
        work.push(deps.ingest.acceptRaw({
          ...base, raw: { chunks: [head, signed], length: size }, size, recipients: hosted, ...(shared ? { filed: { ...filed, omit } } : {}),
        }));
      }
      if (filed && !shared) {
        work.push(deps.ingest.acceptRaw({ ...base, raw: { chunks: [s.raw], length: s.raw.length }, size: s.raw.length, recipients: [], filed }));
      }
      await Promise.all(work);
    } catch (err) {
      reservation.release();
      throw err;
    }
    if (external.length > 0) deps.wakeOutbound();
  };
}
export type SubmitMessage = ReturnType<typeof createSubmissionPath>;
