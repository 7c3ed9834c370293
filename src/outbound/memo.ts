/**
 * Answers of a per-key lookup kept for `ms` (a domain's DKIM key, whether a domain is ours). The
 * delivery worker looked both up in a query of its own for every message; each such read
 * transaction of the main connection comes after the storage thread's commits, so SQLite reloads
 * its pages. Kept as briefly as the queue rows a delivery works from (worker.ts reads them at most
 * a second before use), so a change (a key rotated, a domain added) applies within the same bound.
 * A failed lookup is not kept.
 */
export function createMemo<V>(ms: number, load: (key: string) => Promise<V>) {
  const known = new Map<string, { at: number; value: Promise<V> }>();
  return (key: string): Promise<V> => {
    const now = performance.now();
    const hit = known.get(key);
    if (hit && now - hit.at <= ms) return hit.value;
    // Expired entries go on the next miss; the map holds as many keys as domains seen within `ms`.
    if (known.size > 1_000) for (const [k, v] of known) if (now - v.at > ms) known.delete(k);
    const value = load(key);
    known.set(key, { at: now, value });
    value.catch(() => { if (known.get(key)?.value === value) known.delete(key); });
    return value;
  };
}

/** How long the worker keeps a domain's DKIM key and whether a domain is hosted (as long as queue rows wait, worker.ts). */
export const LOOKUP_HOLD_MS = 1_000;
