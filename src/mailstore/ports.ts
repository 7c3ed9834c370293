import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { MailboxesTable } from '../db/types.js';
import type { InboundReservationsTable, InboundTable } from '../db/tables/ingest.js';
import type { AttachmentsTable, EmailContentsTable, EmailImapTable, EmailsFtsTable, EmailsTable } from '../db/tables/emails.js';
import type { MessageKey } from './message-key.js';

/**
 * The statements of mail storage whose SQL differs between the backends: bulk writes that take a
 * list as one parameter (PostgreSQL unnests arrays, SQLite unpacks JSON) and the bytes of a copy
 * cut from its queue row. sqlite/storage-sql.ts and postgres/storage-sql.ts implement it;
 * storage-sql.ts hands out the one for a connection's backend.
 */
export interface StorageSql {
  /** Makes the default folders of mailboxes that lack them (one statement for all of them). */
  ensureDefaults(db: Db, mailboxIds: number[], now: number): Promise<void>;
  /** Makes the default folders of just-created mailboxes, by address. */
  ensureDefaultsByAddress(db: Db, addresses: string[], now: number): Promise<void>;
  /**
   * Reserves `count` UIDs in the named folder of each mailbox (one statement) and answers the
   * first UID of each; mailboxes without the folder are missing from the answer.
   */
  reserveUids(db: Db, folder: string, counts: Map<number, number>): Promise<Map<number, number>>;
  /** Writes `email_raw` of a copy from its inbound row's bytes: `prefix`, then the raw bytes after `skip`. */
  copyInboundBytes(trx: Db, emailId: number, inboundId: number, skip: number, prefix: Buffer): Promise<void>;
  /**
   * The `email_marker` row through which several nodes writing one database agree on update
   * markers (markers.ts); null where one process writes the database and its cell is the truth.
   */
  readonly markerRow: MarkerRow | null;
}

/** The shared newest update marker (PostgreSQL, migration 013). */
export interface MarkerRow {
  /** Locks the row until the transaction ends and answers its value. */
  lock(trx: Db): Promise<number>;
  /** Raises the row to `value` (before the locking transaction commits). */
  raise(trx: Db, value: number): Promise<void>;
}

/**
 * The inbound queue's statements whose SQL differs between the backends (inbound-store.ts holds
 * the rest): lists as one parameter, ids of new rows, multi-row inserts, scalar max.
 */
export interface InboundSql {
  /** Which of these pairs are already stored or queued (keys as message-key.ts makes them). */
  takenKeys(db: Db, keys: MessageKey[]): Promise<Set<string>>;
  /** Quota and usage of mailboxes. */
  quotas(db: Db, mailboxIds: number[]): Promise<Array<Pick<Selectable<MailboxesTable>, 'id' | 'tenant_id' | 'quota_mb' | 'used_bytes'>>>;
  /** Inserts queue rows and returns their ids, in the order of `rows`. */
  insertInbound(db: Db, rows: Insertable<InboundTable>[]): Promise<number[]>;
  /** Reserves the message_ids of queued rows. */
  reserve(db: Db, rows: InboundReservationsTable[]): Promise<void>;
  /** Rows of the inbound queue without their raw bytes. */
  loadWithoutRaw(db: Db, ids: number[]): Promise<Array<Pick<Selectable<InboundTable>, 'id' | 'kind' | 'status' | 'message' | 'targets' | 'raw_path' | 'size' | 'attempts'>>>;
  /** Full rows of the inbound queue. */
  load(db: Db, ids: number[]): Promise<Array<Selectable<InboundTable>>>;
  /** Marks rows stored (`keep`) or removes them, and drops their reservations. */
  finish(db: Db, done: Array<{ id: number; keep: boolean }>): Promise<void>;
  /** Adds to (or, negative, takes from) a mailbox's stored bytes, never below 0. */
  addUsedBytes(db: Db, mailboxId: number, delta: number): Promise<unknown>;
}

/** A new email row with the id its writer assigned. */
export type NewEmailRow = Insertable<EmailsTable> & { id: number };

/**
 * The writing queries of stored email whose SQL differs between the backends (sqlite/ and
 * postgres/email-writes.ts); email-writes.ts chooses one and adds the queries both share.
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
