import type { Db } from '../../db/connection.js';
import { readerOf, type Reader } from '../../db/reader.js';
import type { KeyLookup } from '../ports.js';
import { KEY_BY_HASH_SQL, type KeyRow } from '../store.js';

/**
 * The key row read by one prepared statement on the read connection (db/reader.ts), without
 * Kysely, every time: nothing is cached, so a revocation or plan change by anyone (the CLI
 * included) applies to the very next request. (A cache would have to ask SQLite whether anything
 * changed, `PRAGMA data_version`, which is one statement just like the lookup it would save.)
 */
export function createSqliteKeyLookup({ db }: { db: Db }): KeyLookup {
  let reader: Reader | null = null;
  return {
    async keyRow(hash: string): Promise<KeyRow | undefined> {
      reader ??= await readerOf(db);
      return reader.prepare(KEY_BY_HASH_SQL).get(hash) as KeyRow | undefined;
    },
  };
}
