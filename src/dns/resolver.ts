import { promises as dns } from 'node:dns';
import type { Answer, MxAnswer, SrvAnswer, TxtAnswer } from './compare.js';

/** How DNS is asked: servers as `ip[:port]` (empty = the system's resolvers), per-try timeout, tries. */
export interface ResolverOptions {
  servers: readonly string[];
  timeoutMs: number;
  tries: number;
}

/** Defaults for checks: a dead resolver costs at most a few seconds of a worker slot. */
export const DEFAULT_RESOLVER_OPTIONS = { timeoutMs: 2000, tries: 2 } as const;

/** NXDOMAIN and NODATA: the name or the type has no records; every other error says nothing about the zone. */
const NOTHING_THERE = new Set(['ENOTFOUND', 'ENODATA']);

/** One set of queries (one check): MX, TXT, SRV and CNAME lookups that report errors as data. */
export interface DnsQueries {
  mx(name: string): Promise<Answer<MxAnswer>>;
  txt(name: string): Promise<TxtAnswer>;
  srv(name: string): Promise<Answer<SrvAnswer>>;
  cname(name: string): Promise<Answer<string>>;
}

/** Opens a set of queries for one check. */
export type OpenQueries = () => DnsQueries;

async function settle<T>(query: () => Promise<T[]>): Promise<Answer<T>> {
  try {
    const records = await query();
    return records.length > 0 ? { kind: 'records', records } : { kind: 'none' };
  } catch (err) {
    const code = String((err as NodeJS.ErrnoException).code ?? 'EUNKNOWN');
    return NOTHING_THERE.has(code) ? { kind: 'none' } : { kind: 'error', code };
  }
}

/**
 * Queries through node's c-ares Resolver. A fresh Resolver per check, so nothing is served from
 * the previous check's cache and a server marked failed by one check does not skew the next.
 */
export function createResolver(opts: ResolverOptions): OpenQueries {
  return () => {
    const resolver = new dns.Resolver({ timeout: opts.timeoutMs, tries: opts.tries });
    if (opts.servers.length > 0) resolver.setServers([...opts.servers]);
    return {
      mx: (name) => settle(() => resolver.resolveMx(name)),
      txt: (name) => settle(() => resolver.resolveTxt(name)),
      srv: (name) => settle(() => resolver.resolveSrv(name)),
      cname: (name) => settle(() => resolver.resolveCname(name)),
    };
  };
}
