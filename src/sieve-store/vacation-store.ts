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
 * Vacation settings and the memory of replies sent. The memory is a row per mailbox, sender and
 * handle with the time before which no new reply goes; claiming a reply is one upsert that only
 * wins when there is no row or its time has passed, so two nodes delivering to the same sender at
 * once send one reply, and the memory survives restarts.
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

    /**
     * Claims the reply to `sender` for the period ending at `untilAt`: true when no reply went to
     * that sender (for that handle) since the last period ended, and records this one.
     */
    async claimReply(mailboxId: number, sender: string, handle: string, nowMs: number, untilAt: number): Promise<boolean> {
      const r = await db.insertInto('vacation_replies').values({ mailbox_id: mailboxId, sender, handle, until_at: untilAt })
        .onConflict((oc) => oc.columns(['mailbox_id', 'sender', 'handle']).doUpdateSet({ until_at: untilAt })
          .where('vacation_replies.until_at', '<=', nowMs))
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
    },

    /** Forgets replies whose period has ended (a cron sweep keeps the table small). */
    async sweep(nowMs: number): Promise<number> {
      const r = await db.deleteFrom('vacation_replies').where('until_at', '<=', nowMs).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
export type VacationStore = ReturnType<typeof createVacationStore>;
