import type { ImapSummary } from '../../message/summary.js';

/** A message of a folder as a mail client keeps it: which row, its UID, flags and change marker. */
export interface FolderEntry {
  id: number;
  uid: number;
  /** Stored flags (\Deleted, \Flagged, keywords ...), space-separated; \Seen is `read`. */
  flags: string;
  read: boolean;
  modseq: number;
}

/** A change of the tenant's mail, as IDLE and command endings announce it. */
export interface Change extends FolderEntry {
  mailboxId: number;
  folder: string;
  deleted: boolean;
}

/** What FETCH and SEARCH read of a message beyond its bytes. */
export interface MessageMeta extends FolderEntry {
  receivedAt: number;
  inboundId: number | null;
}

/** A message to APPEND, parsed. */
export interface AppendInput {
  raw: Buffer;
  /** IMAP's summary of `raw`. */
  imap: ImapSummary;
  flags: string[];
  receivedAt: number;
  messageId: string;
  fromEmail: string;
  fromName: string | null;
  toEmail: string;
  subject: string;
  cc: string[];
  bcc: string[];
  headers: Record<string, string | string[]>;
  bodyText: string | null;
  bodyHtml: string | null;
  hasAttachments: boolean;
}

/** Refused: the mailbox's quota has no room (IMAP `NO [OVERQUOTA]`). */
export class OverQuotaError extends Error {}

/** A stored flags write of one message (not \Seen). */
export interface FlagWrite {
  id: number;
  flags: string;
}
