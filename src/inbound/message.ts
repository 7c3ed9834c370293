import type { ExternalCopies, FiledCopy, InboundMessage, RawDelivery } from './types.js';

/** An attachment once its bytes are a durable blob: metadata plus the blob's SHA-256. */
export interface StoredAttachment {
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  contentId: string | null;
  disposition: string;
}

/** A normalised message whose attachments are blobs: what the queue row and the worker carry. */
export type StoredMessage = Omit<InboundMessage, 'attachments'> & { attachments: StoredAttachment[] };

/** Where copies of a queued message go: a tenant's mailboxes and external forward addresses. */
export interface Target {
  tenantId: number;
  mailboxIds: number[];
  forwards: string[];
  /** The recipient address that led here (to_email of the stored copies). */
  address: string;
  /**
   * Set for the Sent copy of a submission (DECISIONS.md section 13): filed in this folder, read,
   * without email.received; `outboundRef` names the queued bytes of its external recipients, whose
   * items then point at the stored copy (email_id).
   */
  filed?: FiledCopy;
  /** Set on a target of its own (no mailboxes, no forwards) for a submission's external recipients: queued as the record is stored. */
  external?: Omit<ExternalCopies, 'tenantId'>;
}

/** The SMTP envelope kept with raw mail. */
export type Envelope = Omit<RawDelivery, 'raw' | 'recipients' | 'filed' | 'external'> & { recipients: string[] };

/** Size of a message that has no raw form (API mail), as quotas and `size` count it. */
export function apiMessageSize(m: StoredMessage): number {
  let n = Buffer.byteLength(m.subject) + Buffer.byteLength(m.bodyText ?? '') + Buffer.byteLength(m.bodyHtml ?? '');
  for (const [k, v] of Object.entries(m.headers)) n += Buffer.byteLength(k) + Buffer.byteLength(Array.isArray(v) ? v.join('') : v);
  for (const a of m.attachments) n += a.size;
  return n;
}

/** The copies of an SMTP delivery, one target per recipient address, the filed copy (a Sent copy) if any, and a submission's external recipients if any. */
export function smtpTargets(recipients: RawDelivery['recipients'], filed?: RawDelivery['filed'], external?: ExternalCopies): Target[] {
  const targets: Target[] = recipients.map((r) => ({
    tenantId: r.resolution.tenantId,
    mailboxIds: [...new Set(r.resolution.mailboxIds)],
    forwards: [...new Set(r.resolution.forwards)],
    address: r.address,
  }));
  if (filed) {
    targets.push({
      tenantId: filed.tenantId, mailboxIds: [filed.mailboxId], forwards: [], address: filed.address,
      filed: { folder: filed.folder, outboundRef: filed.outboundRef, ...(filed.omit ? { omit: filed.omit } : {}), ...(filed.sends ? { sends: filed.sends } : {}) },
    });
  }
  if (external && external.recipients.length > 0) {
    targets.push({
      tenantId: external.tenantId, mailboxIds: [], forwards: [], address: external.recipients[0],
      external: { recipients: external.recipients, skip: external.skip },
    });
  }
  return targets;
}
