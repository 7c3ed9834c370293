import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { Core } from '../core.js';
import { OverQuotaError, type AppendInput, type FolderMessages } from '../emails/folder-messages.js';
import type { Ingest, Resolution } from '../ingest/types.js';
import { DKIM_SELECTOR } from '../outbound/prepare.js';
import { signDkim } from '../outbound/sign.js';
import type { OutboundStore } from '../outbound/store.js';
import type { OutboundTable } from '../outbound/tables.js';
import { receivedHeader, returnPathHeader } from '../smtp/received.js';
import { submissionStore, type SenderMailbox } from './store.js';

/** A recipient of a submission with where it goes: a hosted delivery, or out through the queue. */
export interface SubmissionRecipient {
  address: string;
  resolution: Extract<Resolution, { kind: 'deliver' }> | { kind: 'not-hosted' };
}

/** One message to send, checked (sender, recipients, limits) and with Message-ID and Date in place. */
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

/**
 * The one path of submitted mail, SMTP and API alike (DECISIONS.md section 13): the copy in the
 * sender's Sent folder (read; APPEND's path, so no email.received), one DKIM signature d=<From
 * domain> s=mailstead, the external recipients as 'submission' items of the outbound queue and the
 * hosted ones through ingest like any inbound mail (webhooks fire, forwards follow). Everything is
 * committed and durable before it resolves, which is before the client hears 250 or 200.
 */
export function createSubmissionPath(core: Core, deps: {
  ingest: Ingest;
  folders: FolderMessages;
  outbound: OutboundStore;
  wakeOutbound: () => void;
  parseForSent: (raw: Buffer, flags: string[], receivedAt: number) => Promise<AppendInput>;
}) {
  const { db, clock, config, logger } = core;

  /** Signs with the From domain's key; a domain without a key (none of ours lacks one) goes unsigned. */
  async function sign(raw: Buffer, domain: string): Promise<Buffer> {
    const pem = await deps.outbound.dkimKey(db, domain);
    if (!pem) {
      logger.warn({ domain }, 'submission from a domain without a DKIM key: sent unsigned');
      return raw;
    }
    return signDkim(raw, { domain, selector: DKIM_SELECTOR, privateKeyPem: pem });
  }

  return async function submit(s: Submission): Promise<void> {
    const now = clock.now();
    const external = s.recipients.filter((r) => r.resolution.kind === 'not-hosted').map((r) => r.address);
    const hosted = s.recipients.flatMap((r) => (r.resolution.kind === 'deliver' ? [{ address: r.address, resolution: r.resolution }] : []));
    // One signature serves every copy: hosted recipients then see DKIM (and DMARC) pass as receivers elsewhere do.
    const signed = await sign(s.raw, s.fromDomain);

    let sentCopy: number | null = null;
    if (s.sender) {
      try {
        const uid = await deps.folders.append(s.sender.tenantId, s.sender.id, 'Sent', await deps.parseForSent(s.raw, ['\\Seen'], now));
        sentCopy = await submissionStore.emailIdAt(db, s.sender.id, 'Sent', uid);
      } catch (err) {
        if (err instanceof OverQuotaError) throw new SenderFullError('no room for the Sent copy');
        throw err;
      }
    }
    await db.transaction().execute(async (trx) => {
      if (external.length > 0) {
        const ref = await deps.outbound.putMessage(trx, signed, now);
        const rows: Insertable<OutboundTable>[] = external.map((rcpt) => ({
          tenant_id: s.tenantId, kind: 'submission', email_id: sentCopy, inbound_id: null, message_ref: ref, mail_from: s.mailFrom,
          rcpt_to: rcpt, via_domain: null, auth: null, next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
        }));
        await deps.outbound.insert(trx, rows);
      }
      if (s.sender) await submissionStore.recordSend(trx, s.sender.id, s.recipients.length, now);
    });
    if (hosted.length > 0) {
      const head = Buffer.from(returnPathHeader(s.mailFrom) + receivedHeader({
        heloName: s.trace.heloName, clientHostname: s.trace.heloName, remoteAddress: s.trace.remoteAddress, hostname: config.hostname,
        protocol: s.trace.protocol, id: randomUUID(), tlsCipher: null, recipients: hosted.map((h) => h.address), at: now,
      }), 'latin1');
      const size = head.length + signed.length;
      await deps.ingest.acceptRaw({
        raw: { chunks: [head, signed], length: size }, size, mailFrom: s.mailFrom, recipients: hosted,
        remoteAddress: s.trace.remoteAddress, heloName: s.trace.heloName, tls: s.trace.tls, receivedAt: now,
      });
    }
    await core.durable();
    if (external.length > 0) deps.wakeOutbound();
  };
}
export type SubmitMessage = ReturnType<typeof createSubmissionPath>;
