import type { Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { AttachmentsTable, EmailContentsTable, EmailImapTable, EmailsFtsTable, EmailsTable } from '../db/tables/emails.js';

/** A new email row with the id its writer assigned. */
export type NewEmailRow = Insertable<EmailsTable> & { id: number };

/**
 * The writing queries of stored email whose SQL differs between the backends (sqlite/ and
 * postgres/email-writes.ts); createEmailWrites below chooses one and adds the queries both share.
 */
export interface EmailWrites {
  /**
   * The first id of the next emails (ids are assigned by the one writer, inside its
   * transaction, so a batch is one statement; never below a used id, even a deleted one).
   */
  nextEmailId(db: Db): Promise<number>;
  /** Inserts emails with their ids; a row whose mailbox already has its message_id is skipped. Returns the ids stored. */
  insertEmails(db: Db, rows: NewEmailRow[]): Promise<Set<number>>;
  /** Contents rows of stored emails. */
  insertContents(db: Db, rows: Insertable<EmailContentsTable>[]): Promise<void>;
  insertAttachments(db: Db, rows: Insertable<AttachmentsTable>[]): Promise<void>;
  /** IMAP summaries of stored emails (src/imap/summary.ts), new or replacing NULLs. */
  saveImap(db: Db, rows: EmailImapTable[]): Promise<void>;
  /** Adds rows to the search index (many at once: most of the cost is per statement and per transaction). */
  indexFts(db: Db, rows: EmailsFtsTable[]): Promise<void>;
  /** Gives a deleted email's bytes back to its mailbox's quota (never below zero). */
  releaseBytes(db: Db, mailboxId: number, size: number): Promise<unknown>;
  /**
   * Turns emails into tombstones: what they held goes (index entries, attachments, contents) and
   * the live ones are marked deleted, each with its own update marker, so a sync client learns of
   * them as it does of a deleted email. The narrow rows stay for that.
   */
  tombstone(db: Db, ids: number[], now: number, nextMarker: () => number): Promise<void>;
}
