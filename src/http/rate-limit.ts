import type { Clock } from '../clock.js';
import type { RateLimit } from '../config.js';

/**
 * Per-key token buckets held in memory: `rate` tokens a second up to `burst`. Returns a function
 * that takes a token for a key and answers how many seconds to wait when none is left (0 = go).
 */
export function createRateLimiter(limit: RateLimit, clock: Clock) {
  const buckets = new Map<number, { tokens: number; at: number }>();
  return (keyId: number): number => {
    if (!limit) return 0;
    const now = clock.now();
    const b = buckets.get(keyId) ?? { tokens: limit.burst, at: now };
    b.tokens = Math.min(limit.burst, b.tokens + ((now - b.at) / 1000) * limit.rate);
    b.at = now;
    buckets.set(keyId, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / limit.rate;
  };
}
