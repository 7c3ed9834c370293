import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { DailyLedger } from './daily.js';
import { DAY_MS } from '../mailstore/submission-store.js';

/** The first key of the transaction advisory locks that take turns on one mailbox's count ('dayl'). */
const LOCK_CLASS = 0x6461796c;

/**
 * The rolling daily limit (DECISIONS.md section 13) on PostgreSQL, where any node may send for a
 * mailbox: the count is the database's. A reservation is a submission_sends row written at once,
 * in a transaction that first takes its mailbox's turn (an advisory lock) and sums the window, so
 * sessions on every node together never pass the limit; the group commit then writes no count
 * of its own (`countsOnReserve`). A submission that fails before its commit deletes its row; one
 * cut short by a crash between the two stays counted, which errs on the side of the limit.
 */
export function createPostgresDailyLedger(deps: { db: Db; clock: Clock; limit: () => number; logger: Logger }): DailyLedger {
  const sumSince = (db: Db, mailboxId: number, since: number) =>
    db.selectFrom('submission_sends').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('recipients'), sql<number>`0`).as('n'))
      .where('mailbox_id', '=', mailboxId).where('at', '>', since).executeTakeFirstOrThrow().then((r) => Number(r.n));

  return {
    countsOnReserve: true,

    /** Recipients counted for the mailbox in the last 24 hours, on every node. */
    used: (mailboxId: number) => sumSince(deps.db, mailboxId, deps.clock.now() - DAY_MS),

    /** Counts `recipients` for the mailbox now, unless that would pass the limit (then null). */
    async reserve(mailboxId: number, recipients: number): Promise<{ release(): void } | null> {
      const now = deps.clock.now();
      const id = await deps.db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int4, ${mailboxId % 2147483647}::int4)`.execute(trx);
        if ((await sumSince(trx, mailboxId, now - DAY_MS)) + recipients > deps.limit()) return null;
        await trx.deleteFrom('submission_sends').where('mailbox_id', '=', mailboxId).where('at', '<=', now - DAY_MS).execute();
        const row = await trx.insertInto('submission_sends').values({ mailbox_id: mailboxId, recipients, at: now }).returning('id').executeTakeFirstOrThrow();
        return row.id;
      });
      if (id === null) return null;
      return {
        release() {
          // Not sent after all. Should the delete fail, the row only counts against the limit.
          deps.db.deleteFrom('submission_sends').where('id', '=', id).execute()
            .catch((err) => deps.logger.warn({ err, mailboxId }, 'taking back a daily-limit reservation failed'));
        },
      };
    },
  };
}
