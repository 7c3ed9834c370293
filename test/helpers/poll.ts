/**
 * How a test waits for what the server does in its own time (storage, a restart, a daemon coming
 * up): it checks again and again until the awaited state shows, bounded in time, never a fixed
 * sleep. `poll` fails the wait at its deadline; `lastCheck` hands back the last value instead, for a
 * test that then asserts on it (so a failure shows what was there, not only that time ran out).
 */
export interface PollOptions<T> {
  /** How long the wait may take (30 s unless told). */
  timeoutMs?: number;
  /** The pause between two checks (50 ms unless told). */
  everyMs?: number;
  /** Whether a value is the awaited one: by default anything but undefined, null and false. */
  done?: (value: T) => boolean;
  /** A check that throws counts as "not yet" (a server still starting) instead of ending the wait. */
  ignoreErrors?: boolean;
  /** Runs before each pause (a test clock moved on, so a retry that waits is due at once). */
  between?: () => void;
}

const present = (v: unknown): boolean => v !== undefined && v !== null && v !== false;

/** Checks until `done` or the deadline; the last value either way, and whether it was the awaited one. */
async function checkUntil<T>(check: () => T | Promise<T>, o: PollOptions<T>): Promise<{ value: T | undefined; done: boolean; error?: Error }> {
  const done = o.done ?? present;
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  for (;;) {
    let value: T | undefined;
    let error: Error | undefined;
    try {
      value = await check();
      if (done(value)) return { value, done: true };
    } catch (err) {
      if (!o.ignoreErrors) throw err;
      error = err as Error;
    }
    if (Date.now() > deadline) return { value, done: false, error };
    o.between?.();
    await new Promise((r) => setTimeout(r, o.everyMs ?? 50));
  }
}

/** Checks until `done`; at the deadline fails with `what` (a function is asked then, for what it shows at that time). */
export async function poll<T>(what: string | (() => string), check: () => T | Promise<T>, o: PollOptions<T> = {}): Promise<T> {
  const r = await checkUntil(check, o);
  if (r.done) return r.value as T;
  const name = typeof what === 'function' ? what() : what;
  throw new Error(`${name}: not within ${o.timeoutMs ?? 30_000} ms${r.error ? ` (last error: ${r.error.message})` : ''}`);
}

/** Checks until `done` or the deadline; the last value checked either way. */
export async function lastCheck<T>(check: () => T | Promise<T>, o: PollOptions<T> = {}): Promise<T> {
  return (await checkUntil(check, o)).value as T;
}
