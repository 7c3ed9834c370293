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
  /** The folder's name in its mailbox (DECISIONS.md section 14). */
  folder: Generated<string>;
  /** The IMAP UID in that folder. */
  uid: number;
  /** IMAP flags other than \\Seen (which is read_at), space-separated (\\Deleted until expunge). */
  flags: Generated<string>;
  /** 1 for mail stored over IMAP (APPEND, COPY), which may repeat a message_id in its mailbox. */
  imported: Generated<number>;
}

/** A folder of a mailbox; its id is its UIDVALIDITY. */
export interface FoldersTable {
  id: Generated<number>;
  mailbox_id: number;
  name: string;
  special_use: string | null;
  subscribed: Generated<number>;
  uidnext: Generated<number>;
  created_at: number;
}

/** RFC 5322 bytes of mail that has none from SMTP (API mail rendered once, APPENDed mail). */
export interface EmailRawTable {
  email_id: number;
  raw: Buffer;
}

/**
 * IMAP's summary of a message (src/message/summary.ts): RFC822.SIZE and the wire text of ENVELOPE and
 * BODYSTRUCTURE. NULL (or no row) for mail stored before it was kept: computed at its first FETCH.
 */
export interface EmailImapTable {
  email_id: number;
  size: number | null;
  envelope: string | null;
  bodystructure: string | null;
}

/** A subscription to a name that is no folder (IMAP; a folder's own is its `subscribed`). */
export interface ImapSubscriptionsTable {
  mailbox_id: number;
  name: string;
}

/** One failed login from an IP (the lock-out of DECISIONS.md section 13 counts these). */
export interface LoginFailuresTable {
  id: Generated<number>;
  ip: string;
  at: number;
  /** 1 while the attempt's password check runs (a place held, not yet a failure). */
  pending: Generated<number>;
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
  folders: FoldersTable;
  email_raw: EmailRawTable;
  email_imap: EmailImapTable;
  login_failures: LoginFailuresTable;
  imap_subscriptions: ImapSubscriptionsTable;
}
