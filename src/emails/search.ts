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
 * Written as a generator that yields each chunk it wants (`[belowId, limit]`) and is resumed with
 * the hits, so the same walk runs over a synchronous fetch (newestHitsSync) or an asynchronous one.
 */
function* walk(k: number): Generator<[belowId: number, limit: number], Hit[], Hit[]> {
  const best: Hit[] = [];
  let below = Number.MAX_SAFE_INTEGER;
  let chunk = Math.max(2 * k, 64);
  for (;;) {
    const hits = yield [below, chunk];
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

/** The walk above; `fetch(belowId, limit)` returns up to `limit` hits with id < belowId, in descending id order. */
export async function newestHits(k: number, fetch: (belowId: number, limit: number) => Promise<Hit[]>): Promise<Hit[]> {
  const w = walk(k);
  for (let step = w.next(); ; ) {
    if (step.done) return step.value;
    step = w.next(await fetch(...step.value));
  }
}

/** The walk above over a synchronous fetch. */
export function newestHitsSync(k: number, fetch: (belowId: number, limit: number) => Hit[]): Hit[] {
  const w = walk(k);
  for (let step = w.next(); ; ) {
    if (step.done) return step.value;
    step = w.next(fetch(...step.value));
  }
}

/**
 * The last term of an FTS5 expression made by ftsMatch when it is a prefix of one plain ASCII
 * token (`... AND "word"*`), lowercased as the tokenizer folds it, with the expression that asks
 * for that token exactly instead; null otherwise (phrases, several tokens, other scripts).
 *
 * FTS5 answers a prefix query by merging the whole doclist of every term with that prefix before
 * the first hit comes out, while an exact term is read lazily from the newest end; when the index
 * holds no longer term with the prefix, both find the same documents.
 */
export function plainPrefix(match: string): { token: string; exact: string } | null {
  const m = /(?:^| AND )"([A-Za-z0-9]+)"\*$/.exec(match);
  return m ? { token: m[1].toLowerCase(), exact: match.slice(0, -1) } : null;
}
