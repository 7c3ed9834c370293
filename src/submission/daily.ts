import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { DAY_MS, submissionStore } from '../mailstore/submission-store.js';

/** One counted submission: when, and how many recipients. */
interface Send {
  at: number;
  recipients: number;
}

/**
 * The rolling daily limit (DECISIONS.md section 13) counted in memory: each mailbox's sends of the
 * last 24 hours are read from submission_sends once, then every submission of this process is
 * counted here as it is reserved, before its row commits. RCPT reads the count without a query,
 * and a reservation is checked and taken in one synchronous step, so concurrent sessions of one
 * mailbox can never pass the limit together. submission_sends keeps the count across restarts.
 * On PostgreSQL, where several nodes may send for one mailbox, pg-daily.ts counts in the database.
 */
export function createDailyLedger(deps: { db: Db; clock: Clock; limit: () => number }): DailyLedger {
  const sends = new Map<number, Send[]>();
  const loading = new Map<number, Promise<Send[]>>();

  /** The mailbox's sends within the window, read from the database the first time. */
  async function window(mailboxId: number): Promise<Send[]> {
    let list = sends.get(mailboxId);
    if (!list) {
      let pending = loading.get(mailboxId);
      if (!pending) {
        pending = submissionStore.recentSends(deps.db, mailboxId, deps.clock.now());
        loading.set(mailboxId, pending);
      }
      try {
        const loaded = await pending;
        // A concurrent caller may have installed the list (and reserved in it) meanwhile.
        list = sends.get(mailboxId) ?? loaded;
        sends.set(mailboxId, list);
      } finally {
        loading.delete(mailboxId);
      }
    }
    const cutoff = deps.clock.now() - DAY_MS;
    let old = 0;
    while (old < list.length && list[old].at <= cutoff) old++;
    if (old > 0) list.splice(0, old);
    return list;
  }

  const total = (list: Send[]) => list.reduce((n, s) => n + s.recipients, 0);

  return {
    countsOnReserve: false,

    /** Recipients counted for the mailbox in the last 24 hours, reservations included. */
    async used(mailboxId: number): Promise<number> {
      return total(await window(mailboxId));
    },

    /**
     * Counts `recipients` for the mailbox now, unless that would pass the limit (then false). The
     * answer's `release` takes the reservation back (the submission failed before its commit).
     */
    async reserve(mailboxId: number, recipients: number): Promise<{ release(): void } | null> {
      const list = await window(mailboxId);
      if (total(list) + recipients > deps.limit()) return null;
      const send: Send = { at: deps.clock.now(), recipients };
      list.push(send);
      return {
        release() {
          const i = list.indexOf(send);
          if (i >= 0) list.splice(i, 1);
        },
      };
    },
  };
}

/** The daily limit's count of each sending mailbox: in this process (SQLite) or in the database (PostgreSQL). */
export interface DailyLedger {
  /** Whether a reservation is already the written count (then the group commit writes none). */
  countsOnReserve: boolean;
  /** Recipients counted for the mailbox in the last 24 hours, reservations included. */
  used(mailboxId: number): Promise<number>;
  /** Counts `recipients` for the mailbox now, unless that would pass the limit (then null). */
  reserve(mailboxId: number, recipients: number): Promise<{ release(): void } | null>;
}
