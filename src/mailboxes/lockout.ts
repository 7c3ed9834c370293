import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';

/** Failures from one IP that lock it out, the window they are counted in, and how long the lock lasts (DECISIONS.md section 13). */
export const LOCKOUT_FAILURES = 10;
export const LOCKOUT_WINDOW_MS = 10 * 60_000;
export const LOCKOUT_MS = 10 * 60_000;

/** A login attempt that was let through and is counted as a failure unless told otherwise. */
export interface LoginAttempt {
  /** The login succeeded, or the check could not be made (an error of ours): it is not a failure. */
  forget(): Promise<void>;
}

/** Whether the failure times `at` (newest first) lock an IP out at `now`. */
function isLocked(at: number[], now: number): boolean {
  // Locked while some run of ten failures within a window ended less than LOCKOUT_MS ago.
  for (let i = 0; i + LOCKOUT_FAILURES - 1 < at.length; i++) {
    const last = at[i]!;
    const tenth = at[i + LOCKOUT_FAILURES - 1]!;
    if (last - tenth <= LOCKOUT_WINDOW_MS && now - last < LOCKOUT_MS) return true;
  }
  return false;
}

/**
 * The login lock-out shared by IMAP and submission: failed logins are rows in the database (so
 * every listener, and every node on a shared database, counts the same failures). An IP with ten
 * failures within ten minutes is locked until ten minutes after the tenth, whatever it sends, even
 * the right password.
 *
 * An attempt is counted BEFORE its password is checked (`begin` inserts its row, then reads the
 * ones before it), and forgotten if it succeeds. Counting after the check would let guesses sent
 * at once, over many connections or to many nodes, all pass the lock check before any was counted:
 * this way an attempt sees the earlier ones (each insert commits before its read, on SQLite and on
 * PostgreSQL alike), and nothing is read and then written back, so no count is lost between nodes.
 * Only attempts BEFORE it (lower ids) count against an attempt: were each to count all the others,
 * fifteen simultaneous guesses would each see fourteen, all be refused and all be taken back,
 * leaving no failure and no lock. So the first ten go on to their password checks and stay
 * counted as failures, and the later ones are refused; an attempt whose earlier neighbour had not
 * yet committed when it looked may get a check too, so a burst can get a few more than ten.
 * Attempts refused by the lock are not counted (their row goes again), so a locked IP is free ten
 * minutes after its tenth failure.
 */
export function createLockout({ db, clock }: { db: Db; clock: Clock }) {
  /** The failures of an IP inside the window that ends now, newest first, counted before the attempt `before` (all without one). */
  const recent = (ip: string, now: number, before: number | null) => {
    let q = db.selectFrom('login_failures').select('at').where('ip', '=', ip).where('at', '>', now - LOCKOUT_WINDOW_MS - LOCKOUT_MS);
    if (before !== null) q = q.where('id', '<', before);
    return q.orderBy('at', 'desc').orderBy('id', 'desc').execute();
  };

  const drop = (id: number) => db.deleteFrom('login_failures').where('id', '=', id).execute().then(() => undefined);

  return {
    /** Counts a login attempt of the IP; null when the IP is locked out (the attempt is refused and not counted). */
    async begin(ip: string): Promise<LoginAttempt | null> {
      const now = clock.now();
      const { id } = await db.insertInto('login_failures').values({ ip, at: now }).returning('id').executeTakeFirstOrThrow();
      if (isLocked((await recent(ip, now, id)).map((r) => r.at), now)) {
        await drop(id);
        return null;
      }
      // Failures too old to matter go; any attempt may do it.
      await db.deleteFrom('login_failures').where('at', '<', now - LOCKOUT_WINDOW_MS - LOCKOUT_MS).execute();
      return { forget: () => drop(id) };
    },

    /** Whether the IP is locked out now (what `begin` checks; for tests and reports). */
    async locked(ip: string): Promise<boolean> {
      const now = clock.now();
      return isLocked((await recent(ip, now, null)).map((r) => r.at), now);
    },
  };
}
export type Lockout = ReturnType<typeof createLockout>;
