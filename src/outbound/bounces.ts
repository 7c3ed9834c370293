import type { Clock } from '../clock.js';
import type { RecipientResolver } from '../inbound/types.js';
import { isSrsLocalPart, type Srs } from '../message/srs.js';

/**
 * The recipient resolver with bounces to forwarded mail (DECISIONS.md section 12): an SRS0=/SRS1=
 * address at a hosted domain whose hash and age check is delivered to the address it encodes (an
 * outbound forward, sent with the null sender); any other SRS address at a hosted domain is an
 * unknown recipient (550 5.1.1), never a catch-all's. Other addresses resolve as before.
 */
export function srsBounceResolver(inner: RecipientResolver, deps: {
  srs: Srs; clock: Clock; hostedTenant: (hostname: string) => Promise<number | null>;
}): RecipientResolver {
  return async (address) => {
    const at = address.lastIndexOf('@');
    if (at <= 0 || !isSrsLocalPart(address.slice(0, at))) return inner(address);
    const tenantId = await deps.hostedTenant(address.slice(at + 1).toLowerCase());
    if (tenantId === null) return { kind: 'not-hosted' };
    const decoded = deps.srs.reverse(address, new Date(deps.clock.now()));
    if (!decoded || !decoded.ok) return { kind: 'unknown', tenantId };
    return { kind: 'deliver', tenantId, mailboxIds: [], forwards: [decoded.address] };
  };
}
