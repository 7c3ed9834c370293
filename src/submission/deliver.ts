import { randomUUID } from 'node:crypto';
import type { Core } from '../core.js';
import { createGroupCommit, type Outcome } from '../ingest/group-commit.js';
import type { Ingest, Resolution } from '../ingest/types.js';
import { DKIM_SELECTOR } from '../outbound/prepare.js';
import type { OutboundStore } from '../outbound/store.js';
import { receivedHeader, returnPathHeader } from '../smtp/received.js';
import type { DailyLedger } from './daily.js';
import { createSubmissionSigner } from './dkim.js';
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

/**
 * The one path of submitted mail, SMTP and API alike (DECISIONS.md section 13): one DKIM signature
 * d=<From domain> s=mailstead; the external recipients as 'submission' items of the outbound queue
 * with the daily count, in group commits (one transaction and one WAL sync in ingest's storage
 * thread for the submissions of every session that arrived meanwhile, commit.ts); the hosted
 * recipients and the copy in the sender's Sent folder (read, no email.received) as records of
 * ingest's acceptance journal, as port 25 mail is (parsed in the parser thread, stored in the
 * storage thread's batches). It resolves once all of it is durable, which is before the client
 * hears 250 or 200; nothing parses the message on this thread.
 */
export function createSubmissionPath(core: Core, deps: {
  ingest: Ingest;
  outbound: OutboundStore;
  ledger: DailyLedger;
  wakeOutbound: () => void;
}) {
  const { db, clock, config, logger } = core;
  const signWith = createSubmissionSigner(DKIM_SELECTOR);

  /** Signs with the From domain's key; a domain without a key (none of ours lacks one) goes unsigned. */
  async function sign(raw: Buffer, domain: string): Promise<Buffer> {
    const pem = await deps.outbound.dkimKey(db, domain);
    if (!pem) {
      logger.warn({ domain }, 'submission from a domain without a DKIM key: sent unsigned');
      return raw;
    }
    return signWith(raw, domain, pem);
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
      // One signature serves every copy: hosted recipients then see DKIM (and DMARC) pass as receivers elsewhere do.
      const signed = await sign(s.raw, s.fromDomain);
      const base = { mailFrom: s.mailFrom, remoteAddress: s.trace.remoteAddress, heloName: s.trace.heloName, tls: s.trace.tls, receivedAt: now };
      const work: Promise<unknown>[] = [];
      if (hosted.length > 0) {
        const head = Buffer.from(returnPathHeader(s.mailFrom) + receivedHeader({
          heloName: s.trace.heloName, clientHostname: s.trace.heloName, remoteAddress: s.trace.remoteAddress, hostname: config.hostname,
          protocol: s.trace.protocol, id: randomUUID(), tlsCipher: null, recipients: hosted.map((h) => h.address), at: now,
        }), 'latin1');
        const size = head.length + signed.length;
        work.push(deps.ingest.acceptRaw({ ...base, raw: { chunks: [head, signed], length: size }, size, recipients: hosted }));
      }
      const fileSent = (outboundRef: number | null) => s.sender ? deps.ingest.acceptRaw({
        ...base, raw: { chunks: [s.raw], length: s.raw.length }, size: s.raw.length, recipients: [],
        filed: { tenantId: s.sender.tenantId, mailboxId: s.sender.id, address: s.sender.address, folder: 'Sent', outboundRef },
      }) : Promise.resolve();
      if (external.length > 0 || s.sender) {
        // The Sent copy names the queued bytes (so the items learn its id once stored): it waits for them when there are any.
        const queued = queue.submit({
          tenantId: s.tenantId, mailFrom: s.mailFrom, external, signed: external.length > 0 ? signed : new Uint8Array(0),
          // A ledger that counts on reserving (PostgreSQL's) has written the count already.
          senderId: deps.ledger.countsOnReserve ? null : s.sender?.id ?? null, recipients: s.recipients.length, at: now,
        });
        work.push(external.length > 0 ? queued.then((ref) => fileSent(ref)) : Promise.all([queued, fileSent(null)]));
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
