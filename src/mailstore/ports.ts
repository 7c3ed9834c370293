import type { Db } from '../db/connection.js';

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
