import type { DeliveryResolver } from './dns-cache.js';
import { isForbiddenTarget, resolveDeliveryTargets, TemporaryDnsError } from './mx.js';
import type { MtaSts } from './mta-sts.js';
import type { Hop } from './transport.js';

/** Where mail for a domain goes now: addresses to try in order, or why it cannot go (for now or ever). */
export type RoutePlan =
  | { kind: 'hops'; hops: Hop[] }
  | { kind: 'permanent'; status: string; response: string }
  | { kind: 'temporary'; response: string };

/**
 * Plans delivery to a domain (DECISIONS.md section 12): MX hosts by preference (the domain's own
 * address without MX), a null MX refused for good; under an MTA-STS policy in `enforce` mode only
 * the MX hosts it lists, each with TLS and a valid certificate required; addresses on loopback,
 * private, link-local or our own networks dropped unless `allowPrivate`.
 */
export function createRouter(deps: {
  resolver: DeliveryResolver; mtaSts: MtaSts; port: number; allowPrivate: boolean; own: ReadonlySet<string>;
}) {
  return async (domain: string): Promise<RoutePlan> => {
    let targets;
    try {
      targets = await resolveDeliveryTargets(domain, deps.resolver);
    } catch (err) {
      const why = err instanceof TemporaryDnsError ? err.message : String((err as Error)?.message ?? err);
      return { kind: 'temporary', response: `DNS lookup for ${domain} failed: ${why}` };
    }
    if (targets.kind === 'null-mx') return { kind: 'permanent', status: '5.1.10', response: `556 5.1.10 ${domain} accepts no mail (null MX)` };
    if (targets.kind === 'no-host') return { kind: 'permanent', status: '5.1.2', response: `550 5.1.2 ${domain} has no MX and no address` };
    const policy = await deps.mtaSts.policy(domain).catch(() => null);
    const enforce = policy !== null && policy.mode === 'enforce';
    const hosts = enforce ? targets.hosts.filter((h) => deps.mtaSts.mxAllowed(policy, h.host)) : targets.hosts;
    if (hosts.length === 0) return { kind: 'temporary', response: `the MTA-STS policy of ${domain} lists none of its MX hosts` };
    const hops: Hop[] = [];
    let refused = 0;
    for (const h of hosts) {
      for (const address of h.addresses) {
        if (!deps.allowPrivate && isForbiddenTarget(address, deps.own)) { refused++; continue; }
        hops.push({ host: h.host, address, port: deps.port, tls: enforce ? 'required' : 'opportunistic' });
      }
    }
    if (hops.length > 0) return { kind: 'hops', hops };
    if (refused > 0) return { kind: 'permanent', status: '5.4.4', response: `550 5.4.4 the MX hosts of ${domain} resolve only to loopback, private or own addresses (refused; MAILSTEAD_OUTBOUND_ALLOW_PRIVATE=true allows them)` };
    return { kind: 'temporary', response: `no address found for the MX hosts of ${domain}` };
  };
}
export type Router = ReturnType<typeof createRouter>;
