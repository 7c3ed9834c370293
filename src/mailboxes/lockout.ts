import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';

/** Failures from one IP that lock it out, the window they are counted in, and how long the lock lasts (DECISIONS.md section 13). */
export const LOCKOUT_FAILURES = 10;
export const LOCKOUT_WINDOW_MS = 10 * 60_000;
export const LOCKOUT_MS = 10 * 60_000;

/** A login attempt that was let through; its row holds a place until its check says how it went. */
export interface LoginAttempt {
  /** The password was wrong: the attempt is a failure from now on. */
  fail(): Promise<void>;
  /** The login succeeded, or the check could not be made (an error of ours): it is not a failure. */
  forget(): Promise<void>;
}

/**
 * How long a check may run before its attempt counts as a failure anyway (a node that stopped
 * mid-check never settles its row), and the longest an attempt waits for earlier ones to settle.
 */
export const PENDING_MS = 30_000;
/** How often a waiting attempt looks again whether the checks before it have settled. */
const SETTLE_POLL_MS = 20;

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
 * the right password. Only a wrong password is a failure.
 *
 * An attempt takes its row BEFORE its password is checked (`begin` inserts it as pending, then reads
 * the ones before it, lower ids): a failure when the check fails (`fail`), gone when it succeeds
 * (`forget`). Counting only after the check would let guesses sent at once, over many connections
 * or to many nodes, all pass the lock check before any was counted; counting attempts in flight as
 * failures would lock out an office's correct logins made at once from one NAT address. So an
 * attempt with ten or more earlier ones still pending, which could still lock the IP, waits until
 * they settle (at most PENDING_MS) and looks again: the first ten guesses get their checks, the
 * later ones then see ten failures and are refused, and twenty correct logins at once all pass.
 * Each insert commits before its read (SQLite and PostgreSQL alike) and nothing is read and
 * written back, so no count is lost between nodes. A pending row older than PENDING_MS counts as a
 * failure. Attempts refused by the lock are not counted (their row goes again), so a locked IP is
 * free ten minutes after its tenth failure.
 */
export function createLockout({ db, clock }: { db: Db; clock: Clock }) {
  /** The attempts of an IP inside the window that ends now, newest first, before the attempt `before` (all without one). */
  const recent = async (ip: string, now: number, before: number | null) => {
    let q = db.selectFrom('login_failures').select(['at', 'pending']).where('ip', '=', ip).where('at', '>', now - LOCKOUT_WINDOW_MS - LOCKOUT_MS);
    if (before !== null) q = q.where('id', '<', before);
    const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').execute();
    return {
      failures: rows.filter((r) => r.pending === 0 || now - r.at >= PENDING_MS).map((r) => r.at),
      all: rows.map((r) => r.at),
    };
  };

  const drop = (id: number) => db.deleteFrom('login_failures').where('id', '=', id).execute().then(() => undefined);

  return {
    /** Counts a login attempt of the IP; null when the IP is locked out (the attempt is refused and not counted). */
    async begin(ip: string): Promise<LoginAttempt | null> {
      const now = clock.now();
      const { id } = await db.insertInto('login_failures').values({ ip, at: now, pending: 1 }).returning('id').executeTakeFirstOrThrow();
      const waitUntil = Date.now() + PENDING_MS;
      for (;;) {
        const at = clock.now();
        const seen = await recent(ip, at, id);
        if (isLocked(seen.failures, at)) {
          await drop(id);
          return null;
        }
        // Earlier checks still running could lock the IP: wait for them (real time, bounded).
        if (!isLocked(seen.all, at) || Date.now() >= waitUntil) break;
        await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
      }
      // Failures too old to matter go; any attempt may do it.
      await db.deleteFrom('login_failures').where('at', '<', now - LOCKOUT_WINDOW_MS - LOCKOUT_MS).execute();
      return {
        fail: () => db.updateTable('login_failures').set({ pending: 0 }).where('id', '=', id).execute().then(() => undefined),
        forget: () => drop(id),
      };
    },

    /** Whether the IP is locked out now (what `begin` checks; for tests and reports). */
    async locked(ip: string): Promise<boolean> {
      const now = clock.now();
      return isLocked((await recent(ip, now, null)).failures, now);
    },
  };
}
export type Lockout = ReturnType<typeof createLockout>;
