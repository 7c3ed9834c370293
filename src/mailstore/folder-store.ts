import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { listOf } from '../db/json-list.js';
import { DEFAULT_FOLDERS } from '../db/migrations/010_folders.js';
import { storageSql } from './storage-sql.js';

export { DEFAULT_FOLDERS };

/** A folder as the store keeps it; `id` is its UIDVALIDITY. */
export interface FolderRow {
  id: number;
  mailbox_id: number;
  name: string;
  special_use: string | null;
  subscribed: number;
  uidnext: number;
}

const FOLDER_COLUMNS = ['id', 'mailbox_id', 'name', 'special_use', 'subscribed', 'uidnext'] as const;

/** Every query of folders (DECISIONS.md section 14). */
export const folderStore = {
  /** Makes the default folders of mailboxes that lack them (new mailboxes, or mail racing a creation). */
  async ensureDefaults(db: Db, mailboxIds: number[], now: number): Promise<void> {
    if (mailboxIds.length > 0) await storageSql(db).ensureDefaults(db, mailboxIds, now);
  },

  /** Makes the default folders of just-created mailboxes, by address. */
  async ensureDefaultsByAddress(db: Db, addresses: string[], now: number): Promise<void> {
    if (addresses.length > 0) await storageSql(db).ensureDefaultsByAddress(db, addresses, now);
  },

  /**
   * Reserves `count` UIDs in the named folder of each mailbox (one statement for all of them) and
   * answers the first UID of each; mailboxes without the folder are missing from the answer.
   */
  reserveUids: (db: Db, folder: string, counts: Map<number, number>): Promise<Map<number, number>> => storageSql(db).reserveUids(db, folder, counts),

  /** The folders of a mailbox, INBOX first, then by name. */
  list: (db: Db, mailboxId: number) =>
    db.selectFrom('folders').select(FOLDER_COLUMNS).where('mailbox_id', '=', mailboxId)
      .orderBy(sql`name = 'INBOX'`, 'desc').orderBy('name').execute() as Promise<FolderRow[]>,

  /** One folder of a mailbox by its exact name. */
  byName: (db: Db, mailboxId: number, name: string) =>
    db.selectFrom('folders').select(FOLDER_COLUMNS).where('mailbox_id', '=', mailboxId).where('name', '=', name)
      .executeTakeFirst() as Promise<FolderRow | undefined>,

  /** A new user folder, not subscribed (RFC 9051 6.3.4: CREATE does not subscribe); undefined when the name is taken. */
  async create(db: Db, mailboxId: number, name: string, now: number): Promise<FolderRow | undefined> {
    const r = await db.insertInto('folders').values({ mailbox_id: mailboxId, name, special_use: null, subscribed: 0, created_at: now })
      .onConflict((oc) => oc.columns(['mailbox_id', 'name']).doNothing()).returning(FOLDER_COLUMNS).executeTakeFirst();
    return r as FolderRow | undefined;
  },

  remove: (db: Db, id: number) => db.deleteFrom('folders').where('id', '=', id).execute(),

  /** Renames a folder and every folder below it (`name/...`); the mail in them follows by name. */
  async rename(db: Db, mailboxId: number, from: string, to: string): Promise<void> {
    await sql`UPDATE folders SET name = ${to} || substr(name, ${from.length + 1})
      WHERE mailbox_id = ${mailboxId} AND (name = ${from} OR substr(name, 1, ${from.length + 1}) = ${from + '/'})`.execute(db);
  },

  setSubscribed: (db: Db, id: number, on: boolean) => db.updateTable('folders').set({ subscribed: on ? 1 : 0 }).where('id', '=', id).execute(),

  /** Drops the folders of deleted mailboxes. */
  removeOfMailboxes: (db: Db, mailboxIds: number[]) =>
    db.deleteFrom('folders').where('mailbox_id', 'in', listOf(db, mailboxIds)).execute(),
};
export type FolderStore = typeof folderStore;
