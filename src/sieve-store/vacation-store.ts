import type { Db } from '../db/connection.js';

/** The vacation settings of the REST endpoint (DECISIONS.md section 19). */
export interface VacationSettings {
  enabled: boolean;
  subject: string | null;
  body: string;
  days: number;
  start: string | null;
  end: string | null;
}

/**
 * Vacation settings, and the sweep of the memory of replies sent (a row per mailbox, sender and
 * handle with the time before which no new reply goes; the filter step claims it: filter.ts).
 */
export function createVacationStore(db: Db) {
  return {
    async settings(mailboxId: number): Promise<VacationSettings | null> {
      const r = await db.selectFrom('vacation_settings').selectAll().where('mailbox_id', '=', mailboxId).executeTakeFirst();
      if (!r) return null;
      return { enabled: Number(r.enabled) === 1, subject: r.subject, body: r.body, days: Number(r.days), start: r.start_date, end: r.end_date };
    },

    async save(mailboxId: number, s: VacationSettings, at: number): Promise<void> {
      const row = { enabled: s.enabled ? 1 : 0, subject: s.subject, body: s.body, days: s.days, start_date: s.start, end_date: s.end, updated_at: at };
      await db.insertInto('vacation_settings').values({ mailbox_id: mailboxId, ...row })
        .onConflict((oc) => oc.column('mailbox_id').doUpdateSet(row)).execute();
    },

    /** Forgets replies whose period has ended (a cron sweep keeps the table small). */
    async sweep(nowMs: number): Promise<number> {
      const r = await db.deleteFrom('vacation_replies').where('until_at', '<=', nowMs).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
export type VacationStore = ReturnType<typeof createVacationStore>;
