import type { Clock } from '../clock.js';
import type { RecipientResolver } from '../inbound/types.js';
import type { QuotaCheck } from './recipients.js';

/** How long a positive answer (a recipient that delivers, a mailbox with room) is reused. */
export const RECIPIENT_CACHE_MS = 1_000;
const MAX_ENTRIES = 10_000;

function boundedSet<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/**
 * Reuses a `deliver` resolution for RECIPIENT_CACHE_MS: a busy sender's recipients cost one lookup
 * a second instead of one per message. Only positive answers are kept, so an address that becomes
 * valid (a new mailbox, a new catch-all) is accepted at once; an address removed within the
 * window is still accepted, and the ingest worker skips mailboxes deleted since acceptance.
 */
export function cachedResolver(resolve: RecipientResolver, clock: Clock): RecipientResolver {
  const cache = new Map<string, { until: number; value: Awaited<ReturnType<RecipientResolver>> }>();
  return async (address) => {
    const key = address.toLowerCase();
    const hit = cache.get(key);
    if (hit && hit.until > clock.now()) return hit.value;
    const value = await resolve(address);
    if (value.kind === 'deliver') boundedSet(cache, key, { until: clock.now() + RECIPIENT_CACHE_MS, value });
    else cache.delete(key);
    return value;
  };
}

/**
 * The quota check with a shortcut: mailboxes that just had room for a message of the maximum
 * size (unlimited ones always do) are not asked again for RECIPIENT_CACHE_MS, neither at RCPT TO
 * nor after DATA. Mailboxes near their quota are asked every time.
 */
export function cachedQuota(check: QuotaCheck, clock: Clock, maxSize: number): QuotaCheck {
  const roomyUntil = new Map<string, number>();
  const keyOf = (ids: number[]) => [...ids].sort((a, b) => a - b).join(',');
  const roomy = (ids: number[]) => (roomyUntil.get(keyOf(ids)) ?? 0) > clock.now();
  return async (ids, incoming) => {
    if (roomy(ids)) return [];
    const full = await check(ids, maxSize);
    if (full.length === 0) {
      boundedSet(roomyUntil, keyOf(ids), clock.now() + RECIPIENT_CACHE_MS);
      return [];
    }
    return incoming >= maxSize ? full : check(ids, incoming);
  };
}
