import { TokenTable } from './token-table.js';

/** Token counts kept in all models together (~60 bytes each: ~15 MB); past it the least recently used models are dropped whole. */
export const TOKEN_CACHE_ENTRIES = 250_000;

interface Kept {
  version: number;
  /** Known tokens' counts, and the tokens the model does not have (asked once, not again). */
  counts: TokenTable;
}

/**
 * The spam models' token counts kept in memory between storage batches by the thread that
 * classifies (one per classify step). A message of ~5 KB has ~170 features; looking every one up
 * in the database for every message cost the storage thread more than the rest of classifying.
 * What is kept is checked against the model's version, read with its totals for every batch
 * (spam_totals.version, raised by every training): a model trained since is read afresh, so a
 * verdict never rests on counts older than the batch's own read of the totals.
 */
export function tokenCache(limit = TOKEN_CACHE_ENTRIES) {
  const kept = new Map<string, Kept>();
  let entries = 0;

  function drop(key: string): void {
    const k = kept.get(key);
    if (!k) return;
    kept.delete(key);
    entries -= k.counts.size;
  }

  return {
    /** The counts kept for model `key` at `version` (none if the model changed since), now its most recently used. */
    counts(key: string, version: number): TokenTable {
      let k = kept.get(key);
      if (k && k.version !== version) { drop(key); k = undefined; }
      if (k) kept.delete(key);
      else k = { version, counts: new TokenTable() };
      // Most recently used last (a Map iterates in insertion order).
      kept.set(key, k);
      return k.counts;
    },
    /**
     * Counts `added` tokens newly kept for model `key`; past the limit, the least recently used other
     * models go, and then this one too (its next batch reads afresh).
     */
    grew(key: string, added: number): void {
      entries += added;
      for (const oldKey of kept.keys()) {
        if (entries <= limit || oldKey === key) break;
        drop(oldKey);
      }
      if (entries > limit) drop(key);
    },
    /** Tokens kept in all (for tests and metrics). */
    size: () => entries,
  };
}

export type TokenCache = ReturnType<typeof tokenCache>;
