import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { listOf } from '../../db/json-list.js';
import type { ImapSummary } from '../../message/summary.js';
import type { EmailStore } from '../store.js';

/** What a header sync reads of a message: INTERNALDATE and, when kept, its IMAP summary. */
export interface SummaryRow {
  id: number;
  receivedAt: number;
  /** Null for mail stored before summaries were kept (or too large to summarise at delivery). */
  summary: ImapSummary | null;
}

/** The reads and writes of kept IMAP summaries (table email_imap) that a header sync makes. */
export function summaryQueries(db: Db, store: EmailStore) {
  return {
    /**
     * The header-sync rows of live messages of a mailbox, in one query: those of a folder with UIDs
     * in [fromUid, toUid], or those with these ids. INTERNALDATE and the kept IMAP summary (FETCH
     * reads no message bytes for these).
     */
    async summaries(mailboxId: number, which: { folder: string; fromUid: number; toUid: number } | { ids: number[] }): Promise<SummaryRow[]> {
      // By ids, the mailbox is compared with a unary plus: SQLite, without statistics, otherwise
      // walked the whole mailbox by its index instead of fetching the rows by id (issue 47).
      const where = 'ids' in which
        ? sql`+e.mailbox_id = ${mailboxId} AND e.id IN ${listOf(db, which.ids)}`
        : sql`e.mailbox_id = ${mailboxId} AND e.folder = ${which.folder} AND e.uid BETWEEN ${which.fromUid} AND ${which.toUid}`;
      const r = await sql<{ id: number; received_at: number; size: number | null; envelope: string | null; bodystructure: string | null }>`
        SELECT e.id, e.received_at, i.size, i.envelope, i.bodystructure FROM emails AS e LEFT JOIN email_imap AS i ON i.email_id = e.id
        WHERE ${where} AND e.deleted_at IS NULL`.execute(db);
      return r.rows.map((x) => ({
        id: x.id,
        receivedAt: x.received_at,
        summary: x.size !== null && x.envelope !== null && x.bodystructure !== null ? { size: x.size, envelope: x.envelope, bodystructure: x.bodystructure } : null,
      }));
    },

    /** Keeps summaries computed at a first FETCH (mail stored before they were kept), so the next one reads them. */
    async saveSummaries(rows: Array<{ id: number; summary: ImapSummary }>): Promise<void> {
      if (rows.length === 0) return;
      await db.transaction().execute((trx) => store.saveImap(trx, rows.map(({ id, summary }) => ({ email_id: id, ...summary }))));
    },
  };
}
