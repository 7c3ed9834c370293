import type { Generated } from 'kysely';

/** What an outbound item is: a forwarder's copy, submitted mail, or a delivery status notification. */
export type OutboundKind = 'forward' | 'submission' | 'dsn';

/** Where an item is in its life: waiting (first try or a retry), delivered, or given up. */
export type OutboundStatus = 'queued' | 'sent' | 'failed';

/**
 * One recipient of one outgoing message (DECISIONS.md section 12). The bytes are not copied per
 * recipient: a forward points at the inbound row that holds the message as it arrived (SMTP raw,
 * or API mail rendered on first use into `outbound_messages`), a DSN or submission at its own
 * `outbound_messages` row.
 */
export interface OutboundTable {
  id: Generated<number>;
  tenant_id: number;
  kind: OutboundKind;
  /** The stored copy the item came from, or null (a forward-only alias keeps no copy). */
  email_id: number | null;
  /** The inbound row holding the original message (forwards). */
  inbound_id: number | null;
  /** The item's own bytes (DSNs, submissions, API mail once rendered). */
  message_ref: number | null;
  /** The original envelope sender; '' for the null sender. */
  mail_from: string;
  rcpt_to: string;
  /** The alias domain a forward leaves from (SRS, ARC and DKIM d=); null: sent as it is. */
  via_domain: string | null;
  /** Inbound authentication results (JSON of AuthResults) for the forward's ARC set and the DMARC rule. */
  auth: string | null;
  status: Generated<OutboundStatus>;
  attempts: Generated<number>;
  /** When the next try is due; null once sent or failed. */
  next_attempt_at: number | null;
  last_response: string | null;
  /** Set once a DSN went out for this item (a second permanent failure sends none). */
  dsn_sent: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** Bytes of outgoing messages that no inbound row holds. */
export interface OutboundMessagesTable {
  id: Generated<number>;
  raw: Buffer;
  created_at: number;
}

/** The tables of outbound delivery. */
export interface OutboundTables {
  outbound: OutboundTable;
  outbound_messages: OutboundMessagesTable;
}
