import type { promises as dnsPromises } from 'node:dns';

/** The lookups delivery makes: MX, the MX hosts' addresses, the MTA-STS TXT record. */
export type DeliveryResolver = Pick<dnsPromises.Resolver, 'resolveMx' | 'resolve4' | 'resolve6' | 'resolveTxt'>;

/** Answers that say the record does not exist (RFC 2308 negative answers), as Node's resolver reports them. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

/** Entries kept at most (oldest dropped first), so a queue to many domains cannot grow the map without end. */
const MAX_ENTRIES = 2_000;

/**
 * A resolver that shares one lookup among the deliveries asking the same question at once, and
 * keeps an answer for `holdMs` (a few seconds, well under any sane TTL): a burst of mail to one
 * domain then costs one MX, A, AAAA and TXT lookup instead of four per message. A definite
 * absence (NXDOMAIN, no record of the type: most domains publish no MTA-STS TXT, many MX hosts no
 * AAAA) is kept as long as an answer, else every message would ask again; other failures
 * (SERVFAIL, timeouts) are not kept, so the next try asks again.
 */
export function cachingResolver(inner: DeliveryResolver, holdMs: number, now: () => number = () => performance.now()): DeliveryResolver {
  const cache = new Map<string, { until: number; answer: Promise<unknown> }>();

  function cached<T>(kind: string, name: string, lookup: () => Promise<T>): Promise<T> {
    const key = `${kind}:${name.toLowerCase()}`;
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.answer as Promise<T>;
    if (hit) cache.delete(key);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    const answer = lookup();
    // Shared while in flight; kept for holdMs once answered, dropped at once when it failed.
    const entry = { until: Number.POSITIVE_INFINITY, answer: answer as Promise<unknown> };
    cache.set(key, entry);
    answer.then(
      () => { entry.until = now() + holdMs; },
      (err: unknown) => {
        if (ABSENT.has(String((err as NodeJS.ErrnoException)?.code))) entry.until = now() + holdMs;
        else if (cache.get(key) === entry) cache.delete(key);
      },
    );
    return answer;
  }

  return {
    resolveMx: (name) => cached('mx', name, () => inner.resolveMx(name)),
    resolve4: ((name: string) => cached('a', name, () => inner.resolve4(name))) as DeliveryResolver['resolve4'],
    resolve6: ((name: string) => cached('aaaa', name, () => inner.resolve6(name))) as DeliveryResolver['resolve6'],
    resolveTxt: (name) => cached('txt', name, () => inner.resolveTxt(name)),
  };
}
