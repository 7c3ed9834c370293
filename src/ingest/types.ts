/**
 * The contracts between the inbound paths (HTTP `POST /v1/mail/inbound`, SMTP) and the one
 * ingestion path. Both paths hand ingest a message and a list of recipients; ingest commits it
 * durably, acknowledges, and stores per-mailbox copies in the worker.
 */

/** One attachment of a normalised message, decoded. */
export interface InboundAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
  contentId?: string | null;
  /** `attachment` or `inline`. */
  disposition?: string | null;
}

/** Authentication results of a message that came over SMTP (mailauth), stored with the email. */
export interface AuthResults {
  spf: { result: string; domain?: string | null; [k: string]: unknown } | null;
  dkim: { result: string; domains?: string[]; [k: string]: unknown } | null;
  dmarc: { result: string; policy?: string | null; [k: string]: unknown } | null;
}

/** A message in the fields of SPEC.md "Email", as both inbound paths produce it. */
export interface InboundMessage {
  messageId: string;
  fromEmail: string;
  fromName: string | null;
  toEmail: string;
  cc: string[];
  bcc: string[];
  subject: string;
  /** Milliseconds since the epoch. */
  receivedAt: number;
  bodyText: string | null;
  bodyHtml: string | null;
  headers: Record<string, string | string[]>;
  attachments: InboundAttachment[];
  auth: AuthResults | null;
}

/**
 * Where mail for one address goes (DECISIONS.md sections 6 and 7): the mailbox itself, else an
 * active alias expanded through alias chains, else the domain's active catch-all, else unknown.
 * `not-hosted` is an address whose domain we do not provision (refused: no relaying).
 */
export type Resolution =
  | { kind: 'deliver'; tenantId: number; mailboxIds: number[]; forwards: string[] }
  | { kind: 'unknown'; tenantId: number }
  | { kind: 'not-hosted' };

/** Resolves one normalised address. Implemented by the aliases capability. */
export type RecipientResolver = (address: string) => Promise<Resolution>;
