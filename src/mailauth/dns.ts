import { Resolver } from 'node:dns';
import { Resolver as PromiseResolver } from 'node:dns/promises';

/** How long one DNS query may take before it counts as a temporary error. */
export const DNS_TIMEOUT_MS = 2_000;

/** A resolver over MAILSTEAD_DNS_SERVERS (the system's when empty), one try, short timeout. */
export function createPromiseResolver(servers: readonly string[], timeout = DNS_TIMEOUT_MS): PromiseResolver {
  const resolver = new PromiseResolver({ timeout, tries: 1 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}

/** The callback resolver smtp-server uses for the client's reverse name, over the same servers. */
export function createReverseResolver(servers: readonly string[], timeout = DNS_TIMEOUT_MS): Resolver {
  const resolver = new Resolver({ timeout, tries: 1 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}

/** A lookup as mailauth calls it: name and record type to records. */
export type DnsLookup = (name: string, rrtype: string) => Promise<string[][] | string[]>;

/** How long answers and definite absences (NXDOMAIN, NODATA) are reused. */
export const DNS_CACHE_MS = 60_000;
/** How long a failure (timeout, refused, SERVFAIL) is reused, so a dead resolver is not asked per message. */
export const DNS_FAILURE_CACHE_MS = 5_000;
const DNS_CACHE_ENTRIES = 10_000;

/**
 * A small cache in front of the mail-authentication lookups: identical queries in flight share one
 * request, answers and absences are kept DNS_CACHE_MS, failures DNS_FAILURE_CACHE_MS. Mail from the
 * same senders (the common case) then costs no DNS round trips at all.
 */
export function cachedLookup(lookup: DnsLookup, now: () => number = Date.now): DnsLookup {
  const cache = new Map<string, { until: number; result: Promise<string[][] | string[]> }>();
  return (name, rrtype) => {
    const key = `${rrtype}:${name.toLowerCase()}`;
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.result;
    if (cache.size >= DNS_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    const result = lookup(name, rrtype);
    const entry = { until: Number.POSITIVE_INFINITY, result };
    cache.set(key, entry);
    result.then(
      () => { entry.until = now() + DNS_CACHE_MS; },
      (err: NodeJS.ErrnoException) => {
        entry.until = now() + (err?.code === 'ENOTFOUND' || err?.code === 'ENODATA' ? DNS_CACHE_MS : DNS_FAILURE_CACHE_MS);
      },
    );
    // The cached promise may be rejected before anyone awaits it again; that is not an unhandled rejection.
    result.catch(() => undefined);
    return result;
  };
}
