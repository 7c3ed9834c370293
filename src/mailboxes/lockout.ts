import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';

/** Failures from one IP that lock it out, the window they are counted in, and how long the lock lasts (DECISIONS.md section 13). */
export const LOCKOUT_FAILURES = 10;
export const LOCKOUT_WINDOW_MS = 10 * 60_000;
export const LOCKOUT_MS = 10 * 60_000;

/**
 * The login lock-out shared by IMAP and submission: failed logins are rows in the database (so
 * every listener, and every node on a shared database, counts the same failures). An IP with ten
 * failures within ten minutes is locked until ten minutes after the tenth, whatever it sends, even
 * the right password.
 */
export function createLockout({ db, clock }: { db: Db; clock: Clock }) {
  /** The failures of an IP inside the window that ends now, newest first. */
  const recent = (ip: string, now: number) =>
    db.selectFrom('login_failures').select('at').where('ip', '=', ip).where('at', '>', now - LOCKOUT_WINDOW_MS - LOCKOUT_MS)
      .orderBy('at', 'desc').execute();

  return {
    /** Whether the IP is locked out now. */
    async locked(ip: string): Promise<boolean> {
      const now = clock.now();
      const at = (await recent(ip, now)).map((r) => r.at);
      // Locked while some run of ten failures within a window ended less than LOCKOUT_MS ago.
      for (let i = 0; i + LOCKOUT_FAILURES - 1 < at.length; i++) {
        const last = at[i];
        const tenth = at[i + LOCKOUT_FAILURES - 1];
        if (last - tenth <= LOCKOUT_WINDOW_MS && now - last < LOCKOUT_MS) return true;
      }
      return false;
    },

    /** Counts a failed login of the IP, and forgets failures too old to matter. */
    async fail(ip: string): Promise<void> {
      const now = clock.now();
      await db.insertInto('login_failures').values({ ip, at: now }).execute();
      await db.deleteFrom('login_failures').where('at', '<', now - LOCKOUT_WINDOW_MS - LOCKOUT_MS).execute();
    },
  };
}
export type Lockout = ReturnType<typeof createLockout>;
