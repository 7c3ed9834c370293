import { sql, type ExpressionBuilder, type Insertable, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../db/connection.js';
import type { Database } from '../db/schema.js';
import type { AttachmentsTable, EmailContentsTable, EmailsFtsTable, EmailsTable } from './tables.js';

/** What narrows a list: the tenant always, the rest when given. */
export interface ListFilter {
  tenantId: number;
  mailboxId?: number;
  /** true: unread only; false: read only. */
  unread?: boolean;
  since?: number;
  before?: number;
}

/** A (received_at, id) position and which side of it a page lies on. */
export interface Position {
  receivedAt: number;
  id: number;
  /** `below`: older than the position (next pages); `above`: newer (previous pages). */
  side: 'below' | 'above';
}

/** The fields of a list item, as stored. */
export const LIST_COLUMNS = [
  'e.id', 'e.mailbox_id', 'e.to_email', 'e.from_email', 'e.from_name', 'e.subject', 'e.snippet',
  'e.received_at', 'e.read_at', 'e.has_attachments', 'e.size',
] as const;

/**
 * A column compared without its index (unary plus): for lookups by id, where SQLite without
 * statistics would otherwise walk a tenant index instead of fetching the rows by rowid.
 */
const notIndexed = (column: 'e.tenant_id') => sql<number>`+${sql.ref(column)}`;

type E = ExpressionBuilder<Database & { e: EmailsTable }, 'e'>;

/** The WHERE of a list page: tenant, live rows, the filters, and the side of the cursor position. */
function listWhere(eb: E, f: ListFilter, pos: Position | null) {
  const and = [eb('e.tenant_id', '=', f.tenantId), eb('e.deleted_at', 'is', null)];
  if (f.mailboxId !== undefined) and.push(eb('e.mailbox_id', '=', f.mailboxId));
  if (f.unread === true) and.push(eb('e.read_at', 'is', null));
  if (f.unread === false) and.push(eb('e.read_at', 'is not', null));
  if (f.since !== undefined) and.push(eb('e.received_at', '>=', f.since));
  if (f.before !== undefined) and.push(eb('e.received_at', '<=', f.before));
  if (pos) {
    // Written as a plain range plus a tie-break so the index range is used.
    const [cmp, strict] = pos.side === 'below' ? (['<=', '<'] as const) : (['>=', '>'] as const);
    and.push(eb('e.received_at', cmp, pos.receivedAt));
    and.push(eb.or([eb('e.received_at', strict, pos.receivedAt), eb('e.id', strict, pos.id)]));
  }
  return eb.and(and);
}

function ordered<O>(q: SelectQueryBuilder<any, any, O>, side: 'below' | 'above') {
  const dir = side === 'below' ? 'desc' : 'asc';
  return q.orderBy('e.received_at', dir).orderBy('e.id', dir);
}

/** Every query of stored email. */
export function createEmailStore() {
  return {
    /**
     * The first id of the next emails (ids are assigned by the one writer, inside its
     * transaction, so a batch is one statement; never below a used id, even a deleted one).
     */
    nextEmailId: (db: Db) =>
      sql<{ n: number }>`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'emails'), 0), coalesce((SELECT max(id) FROM emails), 0)) + 1 AS n`
        .execute(db).then((r) => Number(r.rows[0].n)),

    /** Inserts emails with their ids; a row whose mailbox already has its message_id is skipped. Returns the ids stored. */
    async insertEmails(db: Db, rows: Array<Insertable<EmailsTable> & { id: number }>): Promise<Set<number>> {
      const stored = new Set<number>();
      for (let i = 0; i < rows.length; i += 200) {
        const part = rows.slice(i, i + 200);
        await db.insertInto('emails').values(part).onConflict((oc) => oc.columns(['mailbox_id', 'message_id']).doNothing()).execute();
        const ids = await db.selectFrom('emails').select('id').where('id', 'in', part.map((r) => r.id)).execute();
        for (const r of ids) stored.add(r.id);
      }
      return stored;
    },

    insertContents: (db: Db, rows: Insertable<EmailContentsTable>[]) =>
      rows.length ? db.insertInto('email_contents').values(rows).execute() : Promise.resolve(),

    insertAttachments: (db: Db, rows: Insertable<AttachmentsTable>[]) =>
      rows.length ? db.insertInto('attachments').values(rows).execute() : Promise.resolve(),

    /** Adds rows to the search index (many at once: most of the cost is per statement and per transaction). */
    indexFts: (db: Db, rows: EmailsFtsTable[]) =>
      rows.length ? db.insertInto('emails_fts').values(rows).execute() : Promise.resolve(),

    /** The running received_at maximum of tenants. */
    searchState: (db: Db, tenantIds: number[]) =>
      db.selectFrom('email_search_state').select(['tenant_id', 'received_max']).where('tenant_id', 'in', tenantIds).execute()
        .then((rows) => new Map(rows.map((r) => [r.tenant_id, r.received_max]))),

    saveSearchState: (db: Db, tenantId: number, receivedMax: number) =>
      db.insertInto('email_search_state').values({ tenant_id: tenantId, received_max: receivedMax })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ received_max: receivedMax })).execute(),

    /** The largest update marker stored. */
    maxMarker: (db: Db) =>
      db.selectFrom('emails').select((eb) => eb.fn.max('updated_seq').as('m')).executeTakeFirst().then((r) => Number(r?.m ?? 0)),

    /**
     * One list page, `limit` rows on `pos`'s side, nearest first: an index range in (received_at,
     * id) order over the narrow rows, so the rows come with it (bodies live in email_contents).
     */
    listPage: (db: Db, f: ListFilter, pos: Position | null, limit: number) =>
      ordered(db.selectFrom('emails as e').select(LIST_COLUMNS).where((eb) => listWhere(eb, f, pos)), pos?.side ?? 'below')
        .limit(limit).execute(),

    /** Whether any listed row lies on `pos`'s side. */
    anyBeyond: (db: Db, f: ListFilter, pos: Position) =>
      db.selectFrom('emails as e').select('e.id').where((eb) => listWhere(eb, f, pos)).limit(1).executeTakeFirst().then(Boolean),

    /**
     * One chunk of search hits in descending id order, below `belowId`: the FTS5 doclist is walked
     * from the newest end (CROSS JOIN keeps it the outer loop) and only the narrow emails row is
     * read per hit. `match` is an
     * escaped FTS5 expression (fts.ts).
     */
    searchChunk: (db: Db, match: string, f: ListFilter, pos: Position | null, belowId: number, limit: number) =>
      db.selectFrom('emails_fts').crossJoin('emails as e').whereRef('e.id', '=', 'emails_fts.rowid')
        .select(['e.id', 'e.received_at', 'e.received_max'])
        .where(sql<boolean>`emails_fts MATCH ${match}`)
        .where('emails_fts.rowid', '<', belowId)
        .where((eb) => listWhere(eb, f, pos))
        .orderBy('emails_fts.rowid', 'desc').limit(limit).execute(),

    /** Search hits nearest to `pos` in (received_at, id) order, the plain way (previous pages of a search). */
    searchOrdered: (db: Db, match: string, f: ListFilter, pos: Position | null, limit: number) =>
      ordered(db.selectFrom('emails as e').select(['e.id', 'e.received_at'])
        .where('e.id', 'in', (eb) => eb.selectFrom('emails_fts').select('emails_fts.rowid').where(sql<boolean>`emails_fts MATCH ${match}`))
        .where((eb) => listWhere(eb, f, pos)), pos?.side ?? 'below').limit(limit).execute(),

    /** Whether any search hit lies on `pos`'s side (walking from the newest end, where such hits usually are). */
    searchAnyBeyond: (db: Db, match: string, f: ListFilter, pos: Position) =>
      db.selectFrom('emails_fts').crossJoin('emails as e').whereRef('e.id', '=', 'emails_fts.rowid').select('e.id')
        .where(sql<boolean>`emails_fts MATCH ${match}`).where((eb) => listWhere(eb, f, pos))
        .orderBy('emails_fts.rowid', pos.side === 'above' ? 'desc' : 'asc').limit(1).executeTakeFirst().then(Boolean),

    /** The list fields of these ids (any order). */
    listRows: (db: Db, tenantId: number, ids: number[]) =>
      ids.length === 0 ? Promise.resolve([])
        : db.selectFrom('emails as e').select(LIST_COLUMNS).where('e.id', 'in', ids).where(notIndexed('e.tenant_id'), '=', tenantId).execute(),

    /** A live email of the tenant with its contents, or undefined. */
    get: (db: Db, tenantId: number, id: number) =>
      db.selectFrom('emails as e').innerJoin('email_contents as c', 'c.email_id', 'e.id')
        .select([...LIST_COLUMNS, 'e.message_id', 'e.updated_seq', 'c.cc', 'c.bcc', 'c.headers', 'c.auth', 'c.body_text', 'c.body_html', 'c.inbound_id'])
        .where('e.id', '=', id).where('e.tenant_id', '=', tenantId).where('e.deleted_at', 'is', null).executeTakeFirst(),

    /** The attachments of an email, in their order. */
    attachmentsOf: (db: Db, emailId: number) =>
      db.selectFrom('attachments').select(['id', 'filename', 'content_type', 'size', 'content_id', 'disposition', 'sha256'])
        .where('email_id', '=', emailId).orderBy('id').execute(),

    /** One attachment of a live email of the tenant, or undefined. */
    attachment: (db: Db, tenantId: number, emailId: number, attachmentId: number) =>
      db.selectFrom('attachments as a').innerJoin('emails as e', 'e.id', 'a.email_id')
        .select(['a.id', 'a.email_id', 'a.filename', 'a.content_type', 'a.size', 'a.sha256', 'e.tenant_id'])
        .where('a.id', '=', attachmentId).where('a.email_id', '=', emailId).where('e.tenant_id', '=', tenantId)
        .where('e.deleted_at', 'is', null).executeTakeFirst(),

    /** The live email's mailbox and read state, or undefined. */
    state: (db: Db, tenantId: number, id: number) =>
      db.selectFrom('emails').select(['id', 'mailbox_id', 'read_at', 'size']).where('id', '=', id).where('tenant_id', '=', tenantId)
        .where('deleted_at', 'is', null).executeTakeFirst(),

    /** Sets read_at unless already set; true when this call set it. */
    markRead: (db: Db, id: number, now: number, marker: number) =>
      db.updateTable('emails').set({ read_at: now, updated_seq: marker })
        .where('id', '=', id).where('read_at', 'is', null).where('deleted_at', 'is', null).executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows) === 1),

    /** Soft-deletes; true when this call deleted it. */
    softDelete: (db: Db, id: number, now: number, marker: number) =>
      db.updateTable('emails').set({ deleted_at: now, updated_seq: marker })
        .where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows) === 1),

    /** Gives a deleted email's bytes back to its mailbox's quota. */
    releaseBytes: (db: Db, mailboxId: number, size: number) =>
      db.updateTable('mailboxes').set({ used_bytes: sql`max(0, used_bytes - ${size})` }).where('id', '=', mailboxId).execute(),

    /** Changes of a tenant with a marker above `after` (or at/after `since`), ascending. */
    syncPage: (db: Db, tenantId: number, from: { atLeast: number } | { above: number }, limit: number, mailboxId?: number) => {
      let q = db.selectFrom('emails as e').select([...LIST_COLUMNS, 'e.deleted_at', 'e.updated_seq'])
        .where('e.tenant_id', '=', tenantId);
      q = 'above' in from ? q.where('e.updated_seq', '>', from.above) : q.where('e.updated_seq', '>=', from.atLeast);
      if (mailboxId !== undefined) q = q.where('e.mailbox_id', '=', mailboxId);
      return q.orderBy('e.updated_seq').limit(limit).execute();
    },

    /** The raw source of an email that came over SMTP. */
    rawSource: (db: Db, inboundId: number) =>
      db.selectFrom('inbound').select(['raw', 'raw_path']).where('id', '=', inboundId).executeTakeFirst(),

    /** Ids of the emails stored in these mailboxes. */
    idsInMailboxes: (db: Db, mailboxIds: number[]) =>
      db.selectFrom('emails').select('id').where('mailbox_id', 'in', mailboxIds).execute().then((r) => r.map((x) => x.id)),

    /** Inbound rows that email contents of these emails point at (raw sources). */
    inboundOf: (db: Db, emailIds: number[]) =>
      db.selectFrom('email_contents').select('inbound_id').distinct().where('email_id', 'in', emailIds)
        .where('inbound_id', 'is not', null).execute().then((r) => r.map((x) => x.inbound_id!)),

    /** Removes emails for good: index entries, attachments and contents (cascade), rows. */
    async purge(db: Db, ids: number[]) {
      if (ids.length === 0) return;
      await db.deleteFrom('emails_fts').where('rowid', 'in', ids).execute();
      await db.deleteFrom('emails').where('id', 'in', ids).execute();
    },
  };
}
export type EmailStore = ReturnType<typeof createEmailStore>;
