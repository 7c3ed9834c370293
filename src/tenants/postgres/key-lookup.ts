import type { Db } from '../../db/connection.js';
import type { KeyLookup } from '../ports.js';
import type { KeyRow, TenantStore } from '../store.js';

/** Key rows kept at most (past it they are all dropped and read again). */
const MAX_KEPT_KEYS = 10_000;

/**
 * The key row on PostgreSQL, where the lookup is a round trip to the server, half of a read's:
 * the row is kept while the directory's change count (db/pg-directory.ts) stands still, so a
 * revocation or plan change made through this node applies to its next request, one made on
 * another node or by the CLI once that commit's NOTIFY arrives (milliseconds), as a request that
 * came in just before it would. Only rows found are kept, so keys made up by a caller fill
 * nothing. Without a change count nothing is kept.
 */
export function createPostgresKeyLookup({ db, store, directoryVersion }: { db: Db; store: TenantStore; directoryVersion?: () => number }): KeyLookup {
  /** Key rows read, by hash, with the change count they were read under. */
  const kept = new Map<string, { row: KeyRow; count: number }>();
  return {
    async keyRow(hash: string): Promise<KeyRow | undefined> {
      const count = directoryVersion ? directoryVersion() : NaN;
      const known = kept.get(hash);
      if (known && known.count === count) return known.row;
      const row = await store.keyByHash(db, hash); // a pooled connection reads what any node committed
      if (row && directoryVersion) {
        if (kept.size >= MAX_KEPT_KEYS) kept.clear();
        kept.set(hash, { row, count });
      }
      return row;
    },
  };
}
