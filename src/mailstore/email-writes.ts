import type { Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import { chosenOnce, type Backend } from '../db/backend.js';
import { postgresEmailWrites } from './postgres/email-writes.js';
import { sqliteEmailWrites } from './sqlite/email-writes.js';
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

/**
 * The queries of stored email that the writer runs: the writing ones that differ between the
 * backends (`EmailWrites`), chosen once from `backend`, and those both share. Without a backend the
 * choice is made from the first handle a writing query is given (db/backend.ts `chosenOnce`).
 */
export function createEmailWrites(backend?: Backend) {
  const writes = chosenOnce<EmailWrites>({ sqlite: sqliteEmailWrites, postgres: postgresEmailWrites }, backend);
  return {
    nextEmailId: (db: Db) => writes(db).nextEmailId(db),
    insertEmails: (db: Db, rows: NewEmailRow[]) => writes(db).insertEmails(db, rows),
    insertContents: (db: Db, rows: Insertable<EmailContentsTable>[]) => writes(db).insertContents(db, rows),
    insertAttachments: (db: Db, rows: Insertable<AttachmentsTable>[]) => writes(db).insertAttachments(db, rows),
    saveImap: (db: Db, rows: EmailImapTable[]) => writes(db).saveImap(db, rows),
    indexFts: (db: Db, rows: EmailsFtsTable[]) => writes(db).indexFts(db, rows),
    releaseBytes: (db: Db, mailboxId: number, size: number) => writes(db).releaseBytes(db, mailboxId, size),
    tombstone: (db: Db, ids: number[], now: number, nextMarker: () => number) => writes(db).tombstone(db, ids, now, nextMarker),

    /** The running received_at maximum of tenants. */
    searchState: (db: Db, tenantIds: number[]) =>
      db.selectFrom('email_search_state').select(['tenant_id', 'received_max']).where('tenant_id', 'in', tenantIds).execute()
        .then((rows) => new Map(rows.map((r) => [r.tenant_id, r.received_max]))),

    saveSearchState: (db: Db, tenantId: number, receivedMax: number) =>
      db.insertInto('email_search_state').values({ tenant_id: tenantId, received_max: receivedMax })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ received_max: receivedMax })).execute(),

    /** The largest update marker stored. */
    maxMarker: (db: Db) =>
      db.selectFrom('emails').select((eb) => eb.fn.max('updated_seq').as('m')).executeTakeFirst().then((r) => Number(r?.m ?? 0)),
  };
}
export type EmailRowWrites = ReturnType<typeof createEmailWrites>;
