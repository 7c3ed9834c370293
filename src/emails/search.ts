/** A search hit as the index walk sees it. */
export interface Hit {
  id: number;
  received_at: number;
  /** Upper bound of received_at over every email with an id up to this one. */
  received_max: number;
}

/** Sorts hits newest first: received_at desc, then id desc. */
export const newestFirst = (a: { received_at: number; id: number }, b: { received_at: number; id: number }) =>
  b.received_at - a.received_at || b.id - a.id;

/**
 * The `k` newest hits in (received_at desc, id desc) order, reading the index in descending id
 * order chunk by chunk and stopping as soon as no unread hit can still make the top k: every hit
 * not read yet has an id below the last one read, so its received_at is at most that row's
 * `received_max`; once that bound is not above the k-th best received_at (a tie loses on id), the
 * answer is final. Mail mostly arrives in date order, so one chunk usually decides; imports of old
 * mail or future-dated messages only make it read more chunks, never answer wrongly.
 *
 * `fetch(belowId, limit)` returns up to `limit` hits with id < belowId, in descending id order.
 */
export async function newestHits(k: number, fetch: (belowId: number, limit: number) => Promise<Hit[]>): Promise<Hit[]> {
  const best: Hit[] = [];
  let below = Number.MAX_SAFE_INTEGER;
  let chunk = Math.max(2 * k, 64);
  for (;;) {
    const hits = await fetch(below, chunk);
    for (const h of hits) best.push(h);
    best.sort(newestFirst);
    if (best.length > k) best.length = k;
    if (hits.length < chunk) return best;
    const last = hits[hits.length - 1];
    below = last.id;
    if (best.length === k && last.received_max <= best[k - 1].received_at) return best;
    chunk = Math.min(chunk * 4, 4096);
  }
}
