import type { Generated } from 'kysely';

/** One stored copy of a message in one mailbox: the narrow row that lists, cursors and search read. */
export interface EmailsTable {
  id: Generated<number>;
  tenant_id: number;
  mailbox_id: number;
  message_id: string;
  from_email: string;
  from_name: string | null;
  to_email: string;
  subject: string;
  snippet: string;
  received_at: number;
  /** The largest received_at of the tenant's emails with an id up to this one (search stops early with it). */
  received_max: number;
  size: number;
  has_attachments: number;
  read_at: number | null;
  deleted_at: number | null;
  /** Monotonic update marker (milliseconds * 1000 + a counter), bumped by every change. */
  updated_seq: number;
  created_at: number;
}

/** The wide part of an email, read only by Get and raw rendering. */
export interface EmailContentsTable {
  email_id: number;
  /** The inbound row that holds the original bytes (SMTP mail), else null. */
  inbound_id: number | null;
  cc: string;
  bcc: string;
  headers: string;
  auth: string | null;
  body_text: string | null;
  body_html: string | null;
}

/** Attachment metadata; the bytes are the content-addressed blob `sha256`. */
export interface AttachmentsTable {
  id: Generated<number>;
  email_id: number;
  filename: string;
  content_type: string;
  size: number;
  content_id: string | null;
  disposition: string;
  sha256: string;
}

/** The FTS5 index (contentless; rowid is the email id). */
export interface EmailsFtsTable {
  rowid: number;
  subject: string;
  body: string;
  from_email: string;
  from_name: string;
}

/** Per-tenant running maximum of received_at (source of emails.received_max). */
export interface EmailSearchStateTable {
  tenant_id: number;
  received_max: number;
}

/** The tables of the emails capability. */
export interface EmailTables {
  emails: EmailsTable;
  email_contents: EmailContentsTable;
  attachments: AttachmentsTable;
  emails_fts: EmailsFtsTable;
  email_search_state: EmailSearchStateTable;
}
