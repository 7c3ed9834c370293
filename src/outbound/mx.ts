import { randomInt } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { addressProblem } from '../webhooks/guard.js';
import type { DeliveryResolver } from './dns-cache.js';

type Resolver = DeliveryResolver;

/** Where mail for a domain goes (RFC 5321 section 5.1). */
export type DeliveryTargets =
  /** MX hosts by preference (ties shuffled), each with its A then AAAA addresses; the implicit MX (the domain itself) when it has no MX. */
  | { kind: 'hosts'; hosts: Array<{ host: string; preference: number; addresses: string[] }> }
  /** MX "." (RFC 7505): the domain takes no mail; a permanent 5.1.10. */
  | { kind: 'null-mx' }
  /** No such domain, or nothing to connect to: a permanent failure. */
  | { kind: 'no-host' };

/** DNS could not answer (SERVFAIL, timeout, refused): try again later. */
export class TemporaryDnsError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'TemporaryDnsError';
  }
}

/** The name has no records of the type, or does not exist: both say something definite about the zone. */
const ABSENT = new Set(['ENODATA', 'ENOTFOUND']);
/** More MX hosts than anyone needs; a zone listing hundreds must not cost hundreds of lookups per message. */
const MAX_MX_HOSTS = 10;

const errorCode = (err: unknown) => String((err as NodeJS.ErrnoException)?.code ?? 'EUNKNOWN');

/** Addresses of one host, A then AAAA; `temporary` when a lookup failed without a definite answer. */
async function hostAddresses(host: string, resolver: Resolver): Promise<{ addresses: string[]; temporary: string | null }> {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const addresses: string[] = [];
  let temporary: string | null = null;
  for (const r of [v4, v6]) {
    if (r.status === 'fulfilled') addresses.push(...r.value);
    else if (!ABSENT.has(errorCode(r.reason))) temporary = errorCode(r.reason);
  }
  return { addresses: [...new Set(addresses)], temporary };
}

/** Sorted by preference; hosts of equal preference in random order, which spreads load as RFC 5321 5.1 asks. */
function orderByPreference<T extends { preference: number }>(items: T[]): T[] {
  const keyed = items.map((item) => ({ item, tie: randomInt(0x7fffffff) }));
  keyed.sort((a, b) => a.item.preference - b.item.preference || a.tie - b.tie);
  return keyed.map((k) => k.item);
}

const bareName = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * The hosts to try for `domain`. A host whose addresses cannot be looked up right now is skipped
 * when others can be tried (as Postfix does); when none can, the whole lookup is temporary.
 */
export async function resolveDeliveryTargets(domain: string, resolver: Resolver): Promise<DeliveryTargets> {
  const name = bareName(domain);
  let mx: Array<{ exchange: string; priority: number }>;
  try {
    mx = await resolver.resolveMx(name);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOTFOUND') return { kind: 'no-host' };
    if (code !== 'ENODATA') throw new TemporaryDnsError(`MX lookup for ${name} failed: ${code}`, code);
    mx = [];
  }

  if (mx.length === 0) {
    // No MX: the domain itself is the implicit MX with preference 0 (RFC 5321 5.1).
    const own = await hostAddresses(name, resolver);
    if (own.addresses.length > 0) return { kind: 'hosts', hosts: [{ host: name, preference: 0, addresses: own.addresses }] };
    if (own.temporary) throw new TemporaryDnsError(`address lookup for ${name} failed: ${own.temporary}`, own.temporary);
    return { kind: 'no-host' };
  }

  const real = mx.filter((r) => bareName(r.exchange) !== '');
  // A lone "." is the null MX; mixed with real hosts it is a broken record and the real ones are used.
  if (real.length === 0) return { kind: 'null-mx' };

  const unique = new Map<string, number>();
  for (const r of real) {
    const host = bareName(r.exchange);
    unique.set(host, Math.min(unique.get(host) ?? Number.POSITIVE_INFINITY, r.priority));
  }
  const ordered = orderByPreference([...unique].map(([host, preference]) => ({ host, preference }))).slice(0, MAX_MX_HOSTS);
  const looked = await Promise.all(ordered.map(async (h) => ({ ...h, ...(await hostAddresses(h.host, resolver)) })));
  const hosts = looked.filter((h) => h.addresses.length > 0).map(({ host, preference, addresses }) => ({ host, preference, addresses }));
  if (hosts.length > 0) return { kind: 'hosts', hosts };
  const temporary = looked.find((h) => h.temporary);
  if (temporary) throw new TemporaryDnsError(`address lookup for ${temporary.host} failed: ${temporary.temporary}`, temporary.temporary ?? undefined);
  return { kind: 'no-host' };
}

/** One spelling per address (IPv6 compressed and lower-case, IPv4-mapped IPv6 as IPv4), so sets compare. */
export function canonicalIp(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return null;
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) return (addr as ipaddr.IPv6).toIPv4Address().toString();
  return addr.toString();
}

/**
 * An address mail must not be sent to: anything but public unicast (loopback, RFC 1918, ULA,
 * link-local and so cloud metadata, CGNAT, unspecified, multicast, reserved), an address that is
 * not an address at all, or one of `own` (this box's addresses, so an MX pointing back here cannot
 * loop mail through us). IPv4-mapped IPv6 is judged as the IPv4 address it carries.
 */
export function isForbiddenTarget(ip: string, own: ReadonlySet<string>): boolean {
  const canonical = canonicalIp(ip);
  if (!canonical || addressProblem(canonical) !== null) return true;
  if (own.has(ip) || own.has(canonical)) return true;
  for (const o of own) if (canonicalIp(o) === canonical) return true;
  return false;
}
