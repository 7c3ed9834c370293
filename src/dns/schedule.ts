/**
 * Pure rules of when a hostname's DNS is checked again (DECISIONS.md section 4), as functions of
 * the time `now`, so the schedule is tested with a manual clock instead of waiting.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** How often each kind of hostname is checked. */
export interface CheckSchedule {
  /** A pending hostname younger than this is checked every `pendingFastEveryMs`. */
  pendingFastWindowMs: number;
  pendingFastEveryMs: number;
  /** Pending hostnames past the fast window. */
  pendingEveryMs: number;
  verifiedEveryMs: number;
  /** An unverified hostname is checked often enough that a fix shows within the hour. */
  unverifiedEveryMs: number;
  /**
   * A check counts as due this much early, because the cron tick that enqueues it and the check
   * that stamps `last_checked_at` are a moment apart; without it a per-minute check would slip to
   * every other minute.
   */
  graceMs: number;
}

/** The schedule of DECISIONS.md: pending every minute for the first hour then hourly, verified daily, unverified hourly. */
export const DEFAULT_SCHEDULE: Readonly<CheckSchedule> = Object.freeze({
  pendingFastWindowMs: HOUR,
  pendingFastEveryMs: MINUTE,
  pendingEveryMs: HOUR,
  verifiedEveryMs: DAY,
  unverifiedEveryMs: HOUR,
  graceMs: 15_000,
});

/** What the schedule needs to know about a hostname. */
export interface ScheduleRow {
  hostname: string;
  status: string;
  createdAt: number;
  lastCheckedAt: number | null;
}

/** The time between checks of this hostname at `now`, or null when the loop does not check it. */
export function checkInterval(row: ScheduleRow, now: number, s: CheckSchedule = DEFAULT_SCHEDULE): number | null {
  switch (row.status) {
    case 'pending': return now - row.createdAt < s.pendingFastWindowMs ? s.pendingFastEveryMs : s.pendingEveryMs;
    case 'verified': return s.verifiedEveryMs;
    case 'unverified': return s.unverifiedEveryMs;
    default: return null;
  }
}

/** When the next check of this hostname is due (a never-checked one at once), or null for never. */
export function nextCheckAt(row: ScheduleRow, now: number, s: CheckSchedule = DEFAULT_SCHEDULE): number | null {
  const every = checkInterval(row, now, s);
  if (every === null) return null;
  return row.lastCheckedAt === null ? row.createdAt : row.lastCheckedAt + every - s.graceMs;
}

/** Whether this hostname is due for a check at `now`. */
export function isDue(row: ScheduleRow, now: number, s: CheckSchedule = DEFAULT_SCHEDULE): boolean {
  const at = nextCheckAt(row, now, s);
  return at !== null && at <= now;
}

/**
 * The hostnames to enqueue at `now`: due ones, except those with a check already queued or running
 * (`busy`), most overdue first, at most `limit`.
 */
export function pickDue<R extends ScheduleRow>(rows: readonly R[], now: number, opts: { limit: number; busy: ReadonlySet<string>; schedule?: CheckSchedule }): R[] {
  const s = opts.schedule ?? DEFAULT_SCHEDULE;
  if (opts.limit <= 0) return [];
  return rows
    .filter((r) => !opts.busy.has(r.hostname) && isDue(r, now, s))
    .map((r) => ({ r, at: nextCheckAt(r, now, s)! }))
    .sort((a, b) => a.at - b.at || (a.r.hostname < b.r.hostname ? -1 : 1))
    .slice(0, opts.limit)
    .map((x) => x.r);
}
