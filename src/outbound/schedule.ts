/** The retry rules of DECISIONS.md section 12, as pure functions of the settings. */
export interface RetryPolicy {
  /** Seconds between tries, the last repeated. */
  schedule: readonly number[];
  /** Seconds after queueing when an item that still fails gives up. */
  maxAgeSeconds: number;
}

/**
 * When an item whose try number `attempts` (1 for the first) just failed temporarily is tried
 * next, counted from that try; null when that would be past its maximum age (it fails now).
 */
export function nextAttemptAt(policy: RetryPolicy, attempts: number, createdAt: number, now: number): number | null {
  const i = Math.min(Math.max(attempts, 1), policy.schedule.length) - 1;
  const at = now + policy.schedule[i] * 1000;
  return at > createdAt + policy.maxAgeSeconds * 1000 ? null : at;
}
