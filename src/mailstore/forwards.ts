import type { Insertable } from 'kysely';
import type { StoredMessage, Target } from '../inbound/message.js';
import { isSrsLocalPart } from '../message/srs.js';
import type { OutboundTable } from '../db/tables/outbound.js';

/** A message of an ingest batch as outbound needs it: its inbound row, sender, targets, copies. */
export interface ForwardSource {
  inboundId: number;
  /** The envelope sender (MAIL FROM, or from_email over the API); null for the null sender. */
  mailFrom: string | null;
  message: StoredMessage;
  targets: Target[];
  /** The first stored copy of the message per tenant, if any. */
  emailIdByTenant: ReadonlyMap<number, number>;
}

const localPart = (address: string) => address.slice(0, address.lastIndexOf('@'));
const domainPart = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/**
 * The outbound items of an ingest batch: one forward per external destination of each target
 * (DECISIONS.md section 12), written by ingest in the transaction that stores the copies. A target
 * reached through an SRS address is a bounce coming back to a forwarded message: it goes on with
 * the null sender and without signatures of ours (`via_domain` null).
 */
export function forwardRows(sources: ForwardSource[], now: number): Insertable<OutboundTable>[] {
  const rows: Insertable<OutboundTable>[] = [];
  for (const s of sources) {
    const auth = s.message.auth ? JSON.stringify(s.message.auth) : null;
    for (const t of s.targets) {
      const bounce = isSrsLocalPart(localPart(t.address));
      for (const rcpt of t.forwards) {
        rows.push({
          tenant_id: t.tenantId, kind: 'forward', email_id: s.emailIdByTenant.get(t.tenantId) ?? null,
          inbound_id: s.inboundId, message_ref: null,
          mail_from: bounce ? '' : (s.mailFrom ?? ''), rcpt_to: rcpt, via_domain: bounce ? null : domainPart(t.address), auth,
          next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
        });
      }
    }
  }
  return rows;
}
