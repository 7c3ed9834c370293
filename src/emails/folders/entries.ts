import { sql } from 'kysely';
import { dml } from '../../db/backend.js';
import { listOf } from '../../db/json-list.js';
import type { FolderDeps } from './deps.js';
import type { Change, FolderEntry, MessageMeta } from './types.js';

const ENTRY = sql`id, uid, flags, read_at IS NOT NULL AS read, updated_seq AS modseq`;
// `read` is 0/1 on SQLite and a boolean on PostgreSQL.
type EntryRow = { id: number; uid: number; flags: string; read: number | boolean; modseq: number };
const entry = (r: EntryRow): FolderEntry => ({ id: r.id, uid: r.uid, flags: r.flags, read: r.read === 1 || r.read === true, modseq: r.modseq });

/** The reads of a folder's state: its messages by UID, change markers, changes, per-message fields and STATUS counts. */
export function entryQueries({ db }: Pick<FolderDeps, 'db'>) {
  return {
    /** The live messages of a folder in UID order. */
    entries: (mailboxId: number, folder: string) =>
      sql<EntryRow>`SELECT ${ENTRY} FROM emails WHERE mailbox_id = ${mailboxId} AND folder = ${folder} AND deleted_at IS NULL ORDER BY uid`
        .execute(db).then((r) => r.rows.map(entry)),

    /** The newest change marker of the tenant's mail (HIGHESTMODSEQ). */
    highestModseq: (tenantId: number) =>
      sql<{ m: number | null }>`SELECT max(updated_seq) AS m FROM emails WHERE tenant_id = ${tenantId}`.execute(db).then((r) => Number(r.rows[0]?.m ?? 0)),

    /** The newest change marker of each mailbox of the tenant with changes after `after` (IDLE's poll). */
    changedMailboxes: (tenantId: number, after: number) =>
      sql<{ mailbox_id: number; m: number }>`SELECT mailbox_id, max(updated_seq) AS m FROM emails
        WHERE tenant_id = ${tenantId} AND updated_seq > ${after} GROUP BY mailbox_id`.execute(db)
        .then((r) => new Map(r.rows.map((x) => [x.mailbox_id, Number(x.m)]))),

    /** Changes of the tenant's mail after a marker, oldest first. */
    changes: (tenantId: number, after: number, limit = 1000) =>
      sql<EntryRow & { mailbox_id: number; folder: string; deleted_at: number | null }>`SELECT ${ENTRY}, mailbox_id, folder, deleted_at FROM emails
        WHERE tenant_id = ${tenantId} AND updated_seq > ${after} ORDER BY updated_seq LIMIT ${limit}`.execute(db)
        .then((r) => r.rows.map((x): Change => ({ ...entry(x), mailboxId: x.mailbox_id, folder: x.folder, deleted: x.deleted_at !== null }))),

    /**
     * FETCH's per-message fields of live messages of a mailbox. The mailbox is compared with a
     * unary plus: SQLite, which has no statistics here, otherwise walked the whole mailbox by its
     * index instead of fetching the rows by id (issue 47, test/db/query-plans.test.ts).
     */
    async meta(mailboxId: number, ids: number[]): Promise<Map<number, MessageMeta>> {
      if (ids.length === 0) return new Map();
      const r = await sql<EntryRow & { received_at: number; inbound_id: number | null }>`SELECT ${ENTRY}, received_at,
        (SELECT inbound_id FROM email_contents WHERE email_id = emails.id) AS inbound_id
        FROM emails WHERE id IN ${listOf(db, ids)} AND +mailbox_id = ${mailboxId} AND deleted_at IS NULL`.execute(db);
      return new Map(r.rows.map((x) => [x.id, { ...entry(x), receivedAt: x.received_at, inboundId: x.inbound_id }]));
    },

    /** Counts of a folder for STATUS. */
    counts(mailboxId: number, folder: string) {
      const d = dml(db);
      return sql<{ messages: number; unseen: number; size: number; deleted: number }>`SELECT count(*) AS messages, ${d.countWhere(sql`read_at IS NULL`)} AS unseen,
        coalesce(sum(size), 0) AS size, ${d.countWhere(d.contains(sql`' ' || flags || ' '`, ' \\Deleted '))} AS deleted
        FROM emails WHERE mailbox_id = ${mailboxId} AND folder = ${folder} AND deleted_at IS NULL`.execute(db).then((r) => r.rows[0]);
    },
  };
}
