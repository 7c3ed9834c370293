import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { Backend } from '../db/backend.js';
import type { Reader } from '../db/reader.js';
import { createEmailWrites } from '../mailstore/email-writes.js';
import type { AttachmentsTable } from '../db/tables/emails.js';

/** What narrows a list: the tenant always, the rest when given. */
export interface ListFilter {
  tenantId: number;
  mailboxId?: number;
  /** true: unread only; false: read only. */
  unread?: boolean;
  since?: number;
  before?: number;
  /** The folder's name (every mailbox's folder of that name). */
  folder?: string;
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
  'e.received_at', 'e.read_at', 'e.has_attachments', 'e.size', 'e.folder',
] as const;

/**
 * Every query of stored email that runs through Kysely: the writer's (mailstore/email-writes.ts)
 * and the reading and single-email ones of the API.
 */
export function createEmailStore(backend?: Backend) {
  return {
    ...createEmailWrites(backend),

    /** A live email of the tenant with its contents, or undefined. */
    get: (db: Db, tenantId: number, id: number) =>
      db.selectFrom('emails as e').innerJoin('email_contents as c', 'c.email_id', 'e.id')
        .select([...LIST_COLUMNS, 'e.message_id', 'e.updated_seq', 'c.cc', 'c.bcc', 'c.headers', 'c.auth', 'c.body_text', 'c.body_html', 'c.inbound_id', 'e.flags'])
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

    /**
     * What reading an email's bytes starts from, without its bodies (IMAP FETCH reads thousands in
     * a row): the inbound row it came from and that row's bytes or file; undefined when no such email.
     */
    rawOf: (db: Db, tenantId: number, id: number) =>
      db.selectFrom('emails as e').innerJoin('email_contents as c', 'c.email_id', 'e.id').leftJoin('inbound as i', 'i.id', 'c.inbound_id')
        .select(['c.inbound_id', 'i.raw', 'i.raw_path'])
        .where('e.id', '=', id).where('e.tenant_id', '=', tenantId).where('e.deleted_at', 'is', null).executeTakeFirst(),

    /** Ids of the emails stored in these mailboxes. */
    idsInMailboxes: (db: Db, mailboxIds: number[]) =>
      db.selectFrom('emails').select('id').where('mailbox_id', 'in', mailboxIds).execute().then((r) => r.map((x) => x.id)),

    /** Inbound rows that email contents of these emails point at (raw sources). */
    inboundOf: (db: Db, emailIds: number[]) =>
      db.selectFrom('email_contents').select('inbound_id').distinct().where('email_id', 'in', emailIds)
        .where('inbound_id', 'is not', null).execute().then((r) => r.map((x) => x.inbound_id!)),
  };
}
export type EmailStore = ReturnType<typeof createEmailStore>;

/*
 * The hot reads (list pages, search, sync, get) as plain SQL run by prepared statements on the
 * read connection (src/db/reader.ts), without Kysely: building a query costs more than running
 * most of these. The text is exactly what the Kysely forms these replaced compiled to (the test
 * test/emails/reads.test.ts holds those forms and compares text and parameters for every shape), so
 * the query plans are the ones measured in docs/PERFORMANCE.md, "Reads and their query plans".
 */

/** A query's text and its parameters, in order. */
export interface RawQuery {
  sql: string;
  parameters: unknown[];
}

const column = (c: string) => `"e"."${c}"`;
const LIST_SQL = LIST_COLUMNS.map((c) => column(c.slice(2))).join(', ');

/**
 * The WHERE of a list page: tenant, live rows, the filters, and the side of the cursor position
 * (written as a plain range plus a tie-break so the index range is used). Pushes its parameters.
 */
function listWhere(f: ListFilter, pos: Position | null, parameters: unknown[]): string {
  let w = '("e"."tenant_id" = ? and "e"."deleted_at" is null';
  parameters.push(f.tenantId);
  if (f.mailboxId !== undefined) { w += ' and "e"."mailbox_id" = ?'; parameters.push(f.mailboxId); }
  if (f.folder !== undefined) { w += ' and "e"."folder" = ?'; parameters.push(f.folder); }
  if (f.unread === true) w += ' and "e"."read_at" is null';
  if (f.unread === false) w += ' and "e"."read_at" is not null';
  if (f.since !== undefined) { w += ' and "e"."received_at" >= ?'; parameters.push(f.since); }
  if (f.before !== undefined) { w += ' and "e"."received_at" <= ?'; parameters.push(f.before); }
  if (pos) {
    w += pos.side === 'below'
      ? ' and "e"."received_at" <= ? and ("e"."received_at" < ? or "e"."id" < ?)'
      : ' and "e"."received_at" >= ? and ("e"."received_at" > ? or "e"."id" > ?)';
    parameters.push(pos.receivedAt, pos.receivedAt, pos.id);
  }
  return w + ')';
}

const ORDER = {
  below: ' order by "e"."received_at" desc, "e"."id" desc',
  above: ' order by "e"."received_at" asc, "e"."id" asc',
};

/** The SQL of each hot read (pure: tested against the Kysely forms). */
export const readQueries = {
  /**
   * One list page, `limit` rows on `pos`'s side, nearest first: an index range in (received_at,
   * id) order over the narrow rows, so the rows come with it (bodies live in email_contents).
   */
  listPage(f: ListFilter, pos: Position | null, limit: number): RawQuery {
    const parameters: unknown[] = [];
    const where = listWhere(f, pos, parameters);
    parameters.push(limit);
    return { sql: `select ${LIST_SQL} from "emails" as "e" where ${where}${ORDER[pos?.side ?? 'below']} limit ?`, parameters };
  },

  /** Whether any listed row lies on `pos`'s side. */
  anyBeyond(f: ListFilter, pos: Position): RawQuery {
    const parameters: unknown[] = [];
    const where = listWhere(f, pos, parameters);
    parameters.push(1);
    return { sql: `select "e"."id" from "emails" as "e" where ${where} limit ?`, parameters };
  },

  /**
   * One chunk of search hits in descending id order, below `belowId`: the FTS5 doclist is walked
   * from the newest end (CROSS JOIN keeps it the outer loop) and only the narrow emails row is
   * read per hit. `match` is an escaped FTS5 expression (fts.ts).
   */
  searchChunk(match: string, f: ListFilter, pos: Position | null, belowId: number, limit: number): RawQuery {
    const parameters: unknown[] = [match, belowId];
    const where = listWhere(f, pos, parameters);
    parameters.push(limit);
    return {
      sql: 'select "e"."id", "e"."received_at", "e"."received_max" from "emails_fts" cross join "emails" as "e" where "e"."id" = "emails_fts"."rowid" '
        + `and emails_fts MATCH ? and "emails_fts"."rowid" < ? and ${where} order by "emails_fts"."rowid" desc limit ?`,
      parameters,
    };
  },

  /** Search hits nearest to `pos` in (received_at, id) order, the plain way (previous pages of a search). */
  searchOrdered(match: string, f: ListFilter, pos: Position | null, limit: number): RawQuery {
    const parameters: unknown[] = [match];
    const where = listWhere(f, pos, parameters);
    parameters.push(limit);
    return {
      sql: 'select "e"."id", "e"."received_at" from "emails" as "e" where "e"."id" in (select "emails_fts"."rowid" from "emails_fts" where emails_fts MATCH ?) '
        + `and ${where}${ORDER[pos?.side ?? 'below']} limit ?`,
      parameters,
    };
  },

  /** Whether any search hit lies on `pos`'s side (walking from the newest end, where such hits usually are). */
  searchAnyBeyond(match: string, f: ListFilter, pos: Position): RawQuery {
    const parameters: unknown[] = [match];
    const where = listWhere(f, pos, parameters);
    parameters.push(1);
    return {
      sql: 'select "e"."id" from "emails_fts" cross join "emails" as "e" where "e"."id" = "emails_fts"."rowid" and emails_fts MATCH ? '
        + `and ${where} order by "emails_fts"."rowid" ${pos.side === 'above' ? 'desc' : 'asc'} limit ?`,
      parameters,
    };
  },

  /**
   * The list fields of these ids (any order). The tenant is compared with a unary plus: SQLite
   * without statistics would otherwise walk the tenant index instead of fetching rows by rowid.
   */
  listRows(tenantId: number, ids: number[]): RawQuery {
    return {
      sql: `select ${LIST_SQL} from "emails" as "e" where "e"."id" in (${ids.map(() => '?').join(', ')}) and +"e"."tenant_id" = ?`,
      parameters: [...ids, tenantId],
    };
  },

  /** A live email of the tenant with its contents. */
  get(tenantId: number, id: number): RawQuery {
    return {
      sql: `select ${LIST_SQL}, "e"."message_id", "e"."updated_seq", "c"."cc", "c"."bcc", "c"."headers", "c"."auth", "c"."body_text", "c"."body_html", "c"."inbound_id", "e"."flags", (select "verdict" from "email_spam" where "email_id" = "e"."id") as "spam" `
        + 'from "emails" as "e" inner join "email_contents" as "c" on "c"."email_id" = "e"."id" where "e"."id" = ? and "e"."tenant_id" = ? and "e"."deleted_at" is null',
      parameters: [id, tenantId],
    };
  },

  /** The attachments of an email, in their order. */
  attachmentsOf(emailId: number): RawQuery {
    return {
      sql: 'select "id", "filename", "content_type", "size", "content_id", "disposition", "sha256" from "attachments" where "email_id" = ? order by "id"',
      parameters: [emailId],
    };
  },

  /** Changes of a tenant with a marker above `above` (or at/after `atLeast`), ascending. */
  syncPage(tenantId: number, from: { atLeast: number } | { above: number }, limit: number, mailboxId?: number): RawQuery {
    const parameters: unknown[] = [tenantId];
    let sql = `select ${LIST_SQL}, "e"."deleted_at", "e"."updated_seq" from "emails" as "e" where "e"."tenant_id" = ? and "e"."updated_seq" `;
    if ('above' in from) { sql += '> ?'; parameters.push(from.above); } else { sql += '>= ?'; parameters.push(from.atLeast); }
    if (mailboxId !== undefined) { sql += ' and "e"."mailbox_id" = ?'; parameters.push(mailboxId); }
    parameters.push(limit);
    return { sql: sql + ' order by "e"."updated_seq" limit ?', parameters };
  },
};

/**
 * A row with the fields of a list item, as an array in LIST_COLUMNS order (`L` names the
 * positions): pages are read in better-sqlite3's raw mode, which does not build an object per row.
 * Rows of `get` and `syncPage` carry more columns after these.
 */
export type ListRow = [
  id: number, mailbox_id: number, to_email: string, from_email: string, from_name: string | null, subject: string,
  snippet: string, received_at: number, read_at: number | null, has_attachments: number, size: number, folder: string,
];

/** Positions of the list fields in a ListRow. */
export const L = {
  id: 0, mailbox_id: 1, to_email: 2, from_email: 3, from_name: 4, subject: 5, snippet: 6, received_at: 7, read_at: 8, has_attachments: 9, size: 10, folder: 11,
} as const;

/** A search hit as the index walk reads it. */
export interface HitRow {
  id: number;
  received_at: number;
  received_max: number;
}

/** A live email with its contents, as `get` reads it: the list fields, then these. */
export type EmailRow = [
  ...ListRow, message_id: string, updated_seq: number, cc: string, bcc: string, headers: string, auth: string | null,
  body_text: string | null, body_html: string | null, inbound_id: number | null, flags: string,
  /** The spam verdict's JSON (src/spam), null for mail never classified. */
  spam: string | null,
];

/** An attachment's metadata: its row without the email it belongs to. */
export type AttachmentRow = Omit<Selectable<AttachmentsTable>, 'email_id'>;

/** Positions of an EmailRow's own fields. */
export const G = { message_id: 12, updated_seq: 13, cc: 14, bcc: 15, headers: 16, auth: 17, body_text: 18, body_html: 19, inbound_id: 20, flags: 21, spam: 22 } as const;

/** A change as sync reads it: the list fields, then deletion time and marker. */
export type SyncRow = [...ListRow, deleted_at: number | null, updated_seq: number];

/** Positions of a SyncRow's own fields. */
export const S = { deleted_at: 12, updated_seq: 13 } as const;

/**
 * The terms of the search index, one row per occurrence (an fts5vocab table of the connection's
 * own temp schema: nothing is stored). Asked for the first row in a term range, it stops there,
 * unlike the `row` kind, which counts each term's documents first.
 */
const TERM_INSTANCES = 'temp.emails_fts_instances';

/** The hot reads, run synchronously on the read connection. */
export function createEmailReads(r: Reader) {
  r.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${TERM_INSTANCES} USING fts5vocab(main, emails_fts, instance)`);
  const all = <T>(q: RawQuery) => r.prepare(q.sql).all(q.parameters) as T[];
  const one = <T>(q: RawQuery) => r.prepare(q.sql).get(q.parameters) as T | undefined;
  const rows = <T>(q: RawQuery) => r.prepare(q.sql, true).all(q.parameters) as T[];
  const first = <T>(q: RawQuery) => r.prepare(q.sql, true).get(q.parameters) as T | undefined;
  return {
    listPage: (f: ListFilter, pos: Position | null, limit: number) => rows<ListRow>(readQueries.listPage(f, pos, limit)),
    anyBeyond: (f: ListFilter, pos: Position) => one(readQueries.anyBeyond(f, pos)) !== undefined,
    searchChunk: (match: string, f: ListFilter, pos: Position | null, belowId: number, limit: number) =>
      all<HitRow>(readQueries.searchChunk(match, f, pos, belowId, limit)),
    searchOrdered: (match: string, f: ListFilter, pos: Position | null, limit: number) =>
      all<{ id: number; received_at: number }>(readQueries.searchOrdered(match, f, pos, limit)),
    searchAnyBeyond: (match: string, f: ListFilter, pos: Position) => one(readQueries.searchAnyBeyond(match, f, pos)) !== undefined,
    listRows: (tenantId: number, ids: number[]) => (ids.length === 0 ? [] : rows<ListRow>(readQueries.listRows(tenantId, ids))),
    get: (tenantId: number, id: number) => first<EmailRow>(readQueries.get(tenantId, id)),
    attachmentsOf: (emailId: number) => all<AttachmentRow>(readQueries.attachmentsOf(emailId)),
    syncPage: (tenantId: number, from: { atLeast: number } | { above: number }, limit: number, mailboxId?: number) =>
      rows<SyncRow>(readQueries.syncPage(tenantId, from, limit, mailboxId)),
    /**
     * Whether the index holds a term that starts with `token` and is longer (`token` is lowercase
     * ASCII letters and digits: the next term up is at least token + U+0001, and every extension
     * sorts below the token with its last character raised).
     */
    hasLongerTerm(token: string): boolean {
      const above = token.slice(0, -1) + String.fromCharCode(token.charCodeAt(token.length - 1) + 1);
      return r.prepare(`SELECT 1 FROM ${TERM_INSTANCES} WHERE term >= ? AND term < ? LIMIT 1`).get(`${token}\u0001`, above) !== undefined;
    },
    /** Runs `fn` in one read transaction: every statement of a request sees the same snapshot. */
    snapshot: <T>(fn: () => T) => r.snapshot(fn),
  };
}
export type EmailReads = ReturnType<typeof createEmailReads>;
