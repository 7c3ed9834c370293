import { isIPv4, isIPv6 } from 'node:net';

/** Looks up the A records of a name; rejects on NXDOMAIN, NODATA and every DNS failure. */
export type AddressLookup = (name: string) => Promise<string[]>;

/** How long a zone's answer for one client address is reused (listed or not). */
export const DNSBL_CACHE_MS = 60_000;
/** How long a failed query (timeout, SERVFAIL) is reused, so a dead list is not asked per RCPT. */
export const DNSBL_FAILURE_CACHE_MS = 5_000;
const DNSBL_CACHE_ENTRIES = 10_000;

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** The IPv6 address written out in full: 32 hex digits, no colons. */
function ipv6Nibbles(address: string): string {
  let [head, tail] = address.includes('::') ? address.split('::') : [address, ''];
  // An embedded IPv4 tail (::1.2.3.4 forms) becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(tail || head);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    const groups = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    if (tail) tail = tail.slice(0, -dotted[1].length) + groups;
    else head = head.slice(0, -dotted[1].length) + groups;
  }
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = new Array(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => g.padStart(4, '0')).join('').toLowerCase();
}

/**
 * The name to look up for `ip` under `zone`: the IPv4 octets reversed, or the IPv6 address's 32
 * nibbles reversed (RFC 5782 section 2.4); null for anything that is not an address.
 */
export function dnsblQueryName(ip: string, zone: string): string | null {
  const v4 = MAPPED_IPV4.exec(ip)?.[1] ?? ip;
  if (isIPv4(v4)) return `${v4.split('.').reverse().join('.')}.${zone}`;
  if (isIPv6(ip)) return `${ipv6Nibbles(ip).split('').reverse().join('.')}.${zone}`;
  return null;
}

/**
 * Whether an answer means "listed": an address in 127.0.0.0/8 (RFC 5782 section 2.1) other than
 * 127.255.255.0/24, which lists such as Spamhaus answer to refuse the query (an open resolver, over
 * the free limit): that says nothing about the client and counts as not listed.
 */
export function meansListed(answer: string): boolean {
  return answer.startsWith('127.') && !answer.startsWith('127.255.255.');
}

/**
 * The DNSBL check of MAILSTEAD_DNSBL_ZONES (DECISIONS.md section 18): `listedIn(ip)` resolves with
 * the first zone (in configured order) that lists the client, else null. Every zone is asked at
 * once; a DNS failure or a timeout counts as not listed (a list being down must not refuse mail).
 * Answers are cached per zone and address for DNSBL_CACHE_MS, failures DNSBL_FAILURE_CACHE_MS,
 * and identical queries in flight share one request, so the RCPTs of a session (and the lookup
 * started at connect) cost one query per zone.
 */
export function createDnsbl({ zones, lookup, now = Date.now }: { zones: readonly string[]; lookup: AddressLookup; now?: () => number }) {
  const cache = new Map<string, { until: number; listed: Promise<boolean> }>();

  function listedBy(name: string): Promise<boolean> {
    const hit = cache.get(name);
    if (hit && hit.until > now()) return hit.listed;
    if (cache.size >= DNSBL_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    const entry = { until: Number.POSITIVE_INFINITY, listed: Promise.resolve(false) };
    entry.listed = lookup(name).then(
      (answers) => { entry.until = now() + DNSBL_CACHE_MS; return answers.some(meansListed); },
      (err: NodeJS.ErrnoException) => {
        const absent = err?.code === 'ENOTFOUND' || err?.code === 'ENODATA';
        entry.until = now() + (absent ? DNSBL_CACHE_MS : DNSBL_FAILURE_CACHE_MS);
        return false;
      },
    );
    cache.set(name, entry);
    return entry.listed;
  }

  return {
    enabled: zones.length > 0,
    async listedIn(ip: string): Promise<string | null> {
      const asked = zones.map((zone) => {
        const name = dnsblQueryName(ip, zone);
        return name ? listedBy(name) : Promise.resolve(false);
      });
      const answers = await Promise.all(asked);
      const index = answers.indexOf(true);
      return index === -1 ? null : zones[index];
    },
  };
}
export type Dnsbl = ReturnType<typeof createDnsbl>;
