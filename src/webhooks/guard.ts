import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { HostLookup, ResolvedAddress } from './resolve.js';

/** The setting that lifts the guard, named in its refusals (a developer's local receiver is the usual case). */
export const ALLOW_PRIVATE_HINT = 'MAILSTEAD_WEBHOOK_ALLOW_PRIVATE=true allows http and private addresses, for development';

/** A webhook target the SSRF guard refuses: a non-public address, or a name that resolves to one. */
export class RefusedTargetError extends Error {
  readonly code = 'EWEBHOOKTARGET';
  constructor(message: string) {
    super(message);
    this.name = 'RefusedTargetError';
  }
}

// Names that must never leave the machine whatever DNS says (RFC 6761) and the best-known
// metadata name; every other name is judged by the addresses it resolves to.
const REFUSED_NAMES = /(^|\.)localhost$|^metadata\.google\.internal$/i;

/**
 * Why an IP address may not be a webhook target (its range name: loopback, private, uniqueLocal,
 * linkLocal, carrierGradeNat, multicast, unspecified, reserved, ...), or null for a public unicast
 * address. Only ipaddr.js's `unicast` passes, so cloud metadata addresses (169.254.169.254,
 * fd00:ec2::254, 100.100.100.200) and every special-purpose block are refused; IPv4-mapped IPv6
 * is judged as the IPv4 address it maps.
 */
export function addressProblem(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return 'invalid';
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const range = addr.range();
  return range === 'unicast' ? null : range;
}

/** The host of a URL without IPv6 brackets. */
export const bareHost = (hostname: string) => (hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname);

/** Checks a host (IP literal or name) and resolves it; throws RefusedTargetError when it is not public. */
export async function checkedAddresses(host: string, lookup: HostLookup): Promise<ResolvedAddress[]> {
  const bare = bareHost(host);
  const literal = isIP(bare);
  if (literal) {
    const problem = addressProblem(bare);
    if (problem) throw new RefusedTargetError(`${bare} is a ${problem} address`);
    return [{ address: bare, family: literal === 6 ? 6 : 4 }];
  }
  if (REFUSED_NAMES.test(bare.replace(/\.$/, ''))) throw new RefusedTargetError(`${bare} is a local name`);
  const addresses = await lookup(bare);
  // One bad answer refuses the whole name: a mixed answer is how DNS rebinding slips through.
  for (const a of addresses) {
    const problem = addressProblem(a.address);
    if (problem) throw new RefusedTargetError(`${bare} resolves to ${a.address}, a ${problem} address`);
  }
  if (addresses.length === 0) throw Object.assign(new Error(`${bare} has no addresses`), { code: 'ENODATA' });
  return addresses;
}

/**
 * A `lookup` for net/tls.connect: resolves through the webhook lookup and, unless private targets
 * are allowed, refuses names whose addresses are not public. This is the connect-time half of
 * the guard: the address checked is the address connected to, so a name that changed its
 * answer since registration (DNS rebinding) is still refused.
 */
export function connectLookup(lookup: HostLookup, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const resolve = allowPrivate ? lookup(hostname) : checkedAddresses(hostname, lookup);
    resolve.then((found) => {
      const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
      const list = family ? found.filter((a) => a.family === family) : found;
      if (list.length === 0) {
        callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '', 0);
      } else if (options.all) {
        (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, list);
      } else {
        callback(null, list[0].address, list[0].family);
      }
    }, (err: Error) => callback(err as NodeJS.ErrnoException, '', 0));
  };
}
