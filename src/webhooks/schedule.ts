/** Waits before retry n (after attempt n failed): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const RETRY_DELAYS_MS = [5e3, 300e3, 1800e3, 2 * 3600e3, 5 * 3600e3, 10 * 3600e3, 14 * 3600e3, 20 * 3600e3, 24 * 3600e3] as const;

/** Attempts a delivery gets before it is `failed`: the first and one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Longest wait a Retry-After answer may ask for (the longest step of the schedule). */
export const MAX_RETRY_AFTER_MS = RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1];

/** A webhook whose attempts have all failed this long is deactivated. */
export const FAILING_DEACTIVATION_MS = 5 * 24 * 3600e3;

/**
 * The wait before the next attempt once `attemptsMade` attempts failed, or null when the schedule
 * is used up. Jitter lengthens the step by up to 10 %, so receivers coming back up are not hit by
 * every retry in the same second, and no retry comes earlier than the schedule says.
 */
export function retryDelay(attemptsMade: number, random: () => number = Math.random): number | null {
  if (attemptsMade < 1 || attemptsMade >= MAX_ATTEMPTS) return null;
  const base = RETRY_DELAYS_MS[attemptsMade - 1];
  return Math.round(base * (1 + 0.1 * random()));
}

/**
 * A Retry-After header (delta seconds or an HTTP date) as a wait in ms from `now`, at least 1 s and
 * at most MAX_RETRY_AFTER_MS; null when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return null;
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 1000), MAX_RETRY_AFTER_MS);
}

/** What an answer means for the delivery. */
export type Verdict = 'delivered' | 'gone' | 'retry';

/** Any 2xx delivers; 410 Gone deactivates the webhook; everything else (3xx included) is retried. */
export function verdictOf(statusCode: number | null): Verdict {
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 410) return 'gone';
  return 'retry';
}
