/** The source of time for everything that schedules or stamps; tests pass a controllable one. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that stands still until moved; for tests of cooldowns, expiry and schedules. */
export function manualClock(start = Date.now()) {
  let t = start;
  return {
    now: () => t,
    /** Moves time forward by `ms`. */
    advance(ms: number) { t += ms; },
    /** Sets the absolute time. */
    set(ms: number) { t = ms; },
  };
}
