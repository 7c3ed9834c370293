import { promises as dns } from 'node:dns';

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses; rejects with the DNS error when there are none. */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * The lookup of the webhook guard. With MAILSTEAD_DNS_SERVERS it asks those servers for A and AAAA
 * (a fresh c-ares resolver per lookup, so nothing is cached between the registration check and
 * the connect-time check); without, it asks the system resolver (getaddrinfo, /etc/hosts included).
 */
export function createHostLookup(servers: readonly string[], timeoutMs = 2000): HostLookup {
  if (servers.length === 0) {
    return async (hostname) => {
      const all = await dns.lookup(hostname, { all: true, verbatim: true });
      return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
    };
  }
  return async (hostname) => {
    const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
    resolver.setServers([...servers]);
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const out: ResolvedAddress[] = [];
    if (v4.status === 'fulfilled') out.push(...v4.value.map((address) => ({ address, family: 4 as const })));
    if (v6.status === 'fulfilled') out.push(...v6.value.map((address) => ({ address, family: 6 as const })));
    if (out.length > 0) return out;
    // Prefer the error that says something beyond "this family has no records".
    const errors = [v4, v6].map((r) => (r.status === 'rejected' ? (r.reason as NodeJS.ErrnoException) : null)).filter((e) => e !== null);
    throw errors.find((e) => !NO_RECORDS.has(String(e.code))) ?? errors[0] ?? Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENODATA' });
  };
}
