import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { MailboxesTable } from '../db/types.js';
import type { InboundReservationsTable, InboundTable } from '../db/tables/ingest.js';
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
