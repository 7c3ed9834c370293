import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { dialectOf } from '../db/dialect.js';
import { jsonList, listOf } from '../db/json-list.js';
import type { ImapSummary } from '../imap/summary.js';
import { fits } from '../mailstore/commits.js';
import type { MailChanges } from './changes.js';
import { pgSearchOfFtsMatch, tsquery } from './pg-search.js';
import { summaryQueries } from './summary-rows.js';
import { subscriptionQueries } from './subscriptions.js';
import { textQueries } from './text-search.js';
import { folderStore, type FolderRow } from '../mailstore/folder-store.js';
import type { Markers } from '../mailstore/markers.js';
import type { EmailService } from './service.js';
import type { EmailStore } from './store.js';
import { INDEXED_BODY_CHARS, plainText, snippetOf } from './text.js';

/** A message of a folder as a mail client keeps it: which row, its UID, flags and change marker. */
export interface FolderEntry {
  id: number;
  uid: number;
  /** Stored flags (\Deleted, \Flagged, keywords ...), space-separated; \Seen is `read`. */
  flags: string;
  read: boolean;
  modseq: number;
}

/** A change of the tenant's mail, as IDLE and command endings announce it. */
export interface Change extends FolderEntry {
  mailboxId: number;
  folder: string;
  deleted: boolean;
}

/** What FETCH and SEARCH read of a message beyond its bytes. */
export interface MessageMeta extends FolderEntry {
  receivedAt: number;
  inboundId: number | null;
}

/** A message to APPEND, parsed. */
export interface AppendInput {
  raw: Buffer;
  /** IMAP's summary of `raw`. */
  imap: ImapSummary;
  flags: string[];
  receivedAt: number;
  messageId: string;
  fromEmail: string;
  fromName: string | null;
  toEmail: string;
  subject: string;
  cc: string[];
  bcc: string[];
  headers: Record<string, string | string[]>;
  bodyText: string | null;
  bodyHtml: string | null;
  hasAttachments: boolean;
}

/** Refused: the mailbox's quota has no room (IMAP `NO [OVERQUOTA]`). */
export class OverQuotaError extends Error {}

const ENTRY = sql`id, uid, flags, read_at IS NOT NULL AS read, updated_seq AS modseq`;
// `read` is 0/1 on SQLite and a boolean on PostgreSQL.
type EntryRow = { id: number; uid: number; flags: string; read: number | boolean; modseq: number };
const entry = (r: EntryRow): FolderEntry => ({ id: r.id, uid: r.uid, flags: r.flags, read: r.read === 1 || r.read === true, modseq: r.modseq });

/**
 * The folder view of stored mail that IMAP needs (DECISIONS.md section 14): the messages of a
 * folder by UID, changes since a marker, flags, and the moves, copies and appends that give mail new
 * UIDs. Reads and deletes of whole messages go through the email service, so the three faces
 * (REST, IMAP, webhooks) share one state.
 */
export function createFolderMessages({ db, store, markers, clock, service, changes }: {
  db: Db; store: EmailStore; markers: Markers; clock: Clock; service: EmailService;
  /** Told of every committed change made here (IDLE wakes on it); reads and deletes tell it through the service. */
  changes?: MailChanges;
}) {
  const changed = (mailboxId: number) => changes?.committed([mailboxId]);
  /** Reserves `n` UIDs in a folder; refuses a folder that does not exist. */
  async function reserve(trx: Db, mailboxId: number, folder: string, n: number): Promise<number> {
    const first = (await folderStore.reserveUids(trx, folder, new Map([[mailboxId, n]]))).get(mailboxId);
    if (first === undefined) throw new Error(`no folder ${folder}`);
    return first;
  }

  /** One appended message's rows, inside the caller's transaction (markers ready); answers its UID. */
  async function insertAppended(trx: Db, tenantId: number, mailboxId: number, folder: string, m: AppendInput): Promise<number> {
    const box = await trx.selectFrom('mailboxes').select(['quota_mb', 'used_bytes', 'address']).where('id', '=', mailboxId).executeTakeFirstOrThrow();
    if (!fits(box, m.raw.length)) throw new OverQuotaError('mailbox over quota');
    const uid = await reserve(trx, mailboxId, folder, 1);
    const id = await store.nextEmailId(trx);
    const now = clock.now();
    const text = plainText(m.bodyText, m.bodyHtml);
    const state = (await store.searchState(trx, [tenantId])).get(tenantId);
    const receivedMax = Math.max(state ?? m.receivedAt, m.receivedAt);
    if (receivedMax !== state) await store.saveSearchState(trx, tenantId, receivedMax);
    const stored = m.flags.filter((f) => f.toLowerCase() !== '\\seen' && f.toLowerCase() !== '\\recent');
    await trx.insertInto('emails').values({
      id, tenant_id: tenantId, mailbox_id: mailboxId, message_id: m.messageId, from_email: m.fromEmail, from_name: m.fromName,
      to_email: m.toEmail || box.address, subject: m.subject, snippet: snippetOf(text), received_at: m.receivedAt, received_max: receivedMax,
      size: m.raw.length, has_attachments: m.hasAttachments ? 1 : 0, read_at: m.flags.some((f) => f.toLowerCase() === '\\seen') ? now : null,
      deleted_at: null, updated_seq: markers.next(), created_at: now, folder, uid, flags: stored.join(' '), imported: 1,
    }).execute();
    await trx.insertInto('email_contents').values({
      email_id: id, inbound_id: null, cc: JSON.stringify(m.cc), bcc: JSON.stringify(m.bcc), headers: JSON.stringify(m.headers),
      auth: null, body_text: m.bodyText, body_html: m.bodyHtml,
    }).execute();
    await trx.insertInto('email_raw').values({ email_id: id, raw: m.raw }).execute();
    await store.saveImap(trx, [{ email_id: id, ...m.imap }]);
    await store.indexFts(trx, [{ rowid: id, subject: m.subject, body: text.slice(0, INDEXED_BODY_CHARS), from_email: m.fromEmail, from_name: m.fromName ?? '' }]);
    await trx.updateTable('mailboxes').set({ used_bytes: sql`used_bytes + ${m.raw.length}` }).where('id', '=', mailboxId).execute();
    return uid;
  }

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

    ...summaryQueries(db, store),
    ...textQueries(db),
    ...subscriptionQueries(db),

    /** Counts of a folder for STATUS. */
    counts: (mailboxId: number, folder: string) => (dialectOf(db) === 'postgres'
      ? sql<{ messages: number; unseen: number; size: number; deleted: number }>`SELECT count(*) AS messages, count(*) FILTER (WHERE read_at IS NULL) AS unseen,
        coalesce(sum(size), 0) AS size, count(*) FILTER (WHERE strpos(' ' || flags || ' ', ' \\Deleted ') > 0) AS deleted
        FROM emails WHERE mailbox_id = ${mailboxId} AND folder = ${folder} AND deleted_at IS NULL`.execute(db).then((r) => r.rows[0])
      : sql<{ messages: number; unseen: number; size: number; deleted: number }>`SELECT count(*) AS messages, coalesce(sum(read_at IS NULL), 0) AS unseen,
        coalesce(sum(size), 0) AS size, coalesce(sum(instr(' ' || flags || ' ', ' \\Deleted ') > 0), 0) AS deleted
        FROM emails WHERE mailbox_id = ${mailboxId} AND folder = ${folder} AND deleted_at IS NULL`.execute(db).then((r) => r.rows[0])),

    /**
     * Writes new stored flags (not \Seen) of messages, each with a new marker; with `unchangedSince`
     * only messages not changed after it (CONDSTORE). Answers the ids written and their markers.
     */
    async writeFlags(mailboxId: number, changes: Array<{ id: number; flags: string }>, unchangedSince?: number): Promise<Map<number, number>> {
      const done = new Map<number, number>();
      if (changes.length === 0) return done;
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        for (const c of changes) {
          const marker = markers.next();
          let q = trx.updateTable('emails').set({ flags: c.flags, updated_seq: marker })
            .where('id', '=', c.id).where('mailbox_id', '=', mailboxId).where('deleted_at', 'is', null);
          if (unchangedSince !== undefined) q = q.where('updated_seq', '<=', unchangedSince);
          if (Number((await q.executeTakeFirst()).numUpdatedRows) === 1) done.set(c.id, marker);
        }
        await markers.flush(trx);
      });
      if (done.size > 0) changed(mailboxId);
      return done;
    },

    /** Clears \Seen (read_at) of messages; setting it goes through the service's markRead (email.read). */
    async markUnread(mailboxId: number, ids: number[]): Promise<void> {
      if (ids.length === 0) return;
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        for (const id of ids) {
          await trx.updateTable('emails').set({ read_at: null, updated_seq: markers.next() })
            .where('id', '=', id).where('mailbox_id', '=', mailboxId).where('read_at', 'is not', null).where('deleted_at', 'is', null).execute();
        }
        await markers.flush(trx);
      });
      changed(mailboxId);
    },

    markRead: (tenantId: number, id: number) => service.markRead(tenantId, id),

    /** Expunges: the soft delete of DELETE /v1/emails/{id} (tombstone, quota, email.deleted). */
    async expunge(tenantId: number, ids: number[]): Promise<void> {
      for (const id of ids) await service.remove(tenantId, id).catch(() => undefined);
    },

    /** Moves messages to another folder of the mailbox: new UIDs there, one update each (not a deletion). */
    async move(mailboxId: number, ids: number[], folder: string): Promise<number[]> {
      const uids: number[] = [];
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const first = await reserve(trx, mailboxId, folder, ids.length);
        for (const [i, id] of ids.entries()) {
          await trx.updateTable('emails').set({ folder, uid: first + i, updated_seq: markers.next() })
            .where('id', '=', id).where('mailbox_id', '=', mailboxId).where('deleted_at', 'is', null).execute();
          uids.push(first + i);
        }
        await markers.flush(trx);
      });
      changed(mailboxId);
      return uids;
    },

    /**
     * Copies messages into a folder of the mailbox: new emails sharing the source's bytes (the raw
     * row of SMTP mail, or a copy of the kept rendering), contents, attachments and index entries;
     * they count toward the quota. Answers the new UIDs in order.
     */
    async copy(mailboxId: number, ids: number[], folder: string): Promise<number[]> {
      const uids: number[] = [];
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const first = await reserve(trx, mailboxId, folder, ids.length);
        let nextId = await store.nextEmailId(trx);
        const now = clock.now();
        let added = 0;
        for (const [i, id] of ids.entries()) {
          const src = await trx.selectFrom('emails').selectAll().where('id', '=', id).where('mailbox_id', '=', mailboxId).where('deleted_at', 'is', null).executeTakeFirst();
          const contents = await trx.selectFrom('email_contents').selectAll().where('email_id', '=', id).executeTakeFirst();
          if (!src || !contents) continue;
          const newId = nextId++;
          const { id: _old, ...rest } = src;
          await trx.insertInto('emails').values({ ...rest, id: newId, folder, uid: first + i, imported: 1, updated_seq: markers.next(), created_at: now }).execute();
          await trx.insertInto('email_contents').values({ ...contents, email_id: newId }).execute();
          await sql`INSERT INTO attachments (email_id, filename, content_type, size, content_id, disposition, sha256)
            SELECT ${newId}, filename, content_type, size, content_id, disposition, sha256 FROM attachments WHERE email_id = ${id} ORDER BY id`.execute(trx);
          await sql`INSERT INTO email_raw (email_id, raw) SELECT ${newId}, raw FROM email_raw WHERE email_id = ${id}`.execute(trx);
          // The same bytes: the same summary (none yet for mail stored before summaries were kept).
          await sql`INSERT INTO email_imap (email_id, size, envelope, bodystructure)
            SELECT ${newId}, size, envelope, bodystructure FROM email_imap WHERE email_id = ${id}`.execute(trx);
          const text = plainText(contents.body_text, contents.body_html).slice(0, INDEXED_BODY_CHARS);
          await store.indexFts(trx, [{ rowid: newId, subject: src.subject, body: text, from_email: src.from_email, from_name: src.from_name ?? '' }]);
          added += src.size;
          uids.push(first + i);
        }
        if (added > 0) await trx.updateTable('mailboxes').set({ used_bytes: sql`used_bytes + ${added}` }).where('id', '=', mailboxId).execute();
        await markers.flush(trx);
      });
      changed(mailboxId);
      return uids;
    },

    /**
     * Stores an APPENDed message in a folder (no email.received: only delivery fires it), its bytes
     * kept as given; refuses with OverQuotaError when the quota has no room. Answers its UID.
     */
    async append(tenantId: number, mailboxId: number, folder: string, m: AppendInput): Promise<number> {
      const uid = await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const uid = await insertAppended(trx, tenantId, mailboxId, folder, m);
        await markers.flush(trx);
        return uid;
      });
      changed(mailboxId);
      return uid;
    },

    /**
     * Stores messages in a folder the way APPEND does (no email.received, no filter), in one
     * transaction that also runs `alongside` (an import records its progress there, so the two
     * cannot disagree after a crash). Stops at the first message the quota has no room for and
     * commits those before it: answers how many were stored and whether the quota stopped it.
     */
    async appendMany(tenantId: number, mailboxId: number, folder: string, list: AppendInput[], alongside?: (trx: Db, stored: number) => Promise<void>): Promise<{ stored: number; overQuota: boolean }> {
      const out = await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        let stored = 0;
        let overQuota = false;
        for (const m of list) {
          try {
            await insertAppended(trx, tenantId, mailboxId, folder, m);
          } catch (err) {
            if (!(err instanceof OverQuotaError)) throw err;
            overQuota = true;
            break;
          }
          stored++;
        }
        await markers.flush(trx);
        if (alongside) await alongside(trx, stored);
        return { stored, overQuota };
      });
      if (out.stored > 0) changed(mailboxId);
      return out;
    },

    /** Ids among `ids` whose indexed subject, body or sender match a full-text expression (fts.ts). */
    async ftsMatching(match: string, ids: number[]): Promise<Set<number>> {
      if (ids.length === 0) return new Set();
      if (dialectOf(db) === 'postgres') {
        // The document holds all four fields, weighted by field (pg-store.ts): BODY keeps to the body's (B).
        const { search, bodyOnly } = pgSearchOfFtsMatch(match);
        if (search === null) return new Set();
        const document = bodyOnly ? sql`ts_filter(document, '{b}')` : sql`document`;
        const r = await sql<{ email_id: number }>`SELECT email_id FROM emails_fts WHERE email_id = ANY(${ids}::bigint[]) AND ${document} @@ ${tsquery(search)}`.execute(db);
        return new Set(r.rows.map((x) => Number(x.email_id)));
      }
      const r = await sql<{ rowid: number }>`SELECT rowid FROM emails_fts WHERE emails_fts MATCH ${match} AND rowid IN ${jsonList(ids)}`.execute(db);
      return new Set(r.rows.map((x) => x.rowid));
    },

    /** The folders of a mailbox, made first if the mailbox has none yet. */
    async folders(mailboxId: number): Promise<FolderRow[]> {
      const list = await folderStore.list(db, mailboxId);
      if (list.some((f) => f.name === 'INBOX')) return list;
      await folderStore.ensureDefaults(db, [mailboxId], clock.now());
      return folderStore.list(db, mailboxId);
    },

    folder: (mailboxId: number, name: string) => folderStore.byName(db, mailboxId, name),

    /** Creates a folder (and missing parents); false when it exists. */
    async createFolder(mailboxId: number, name: string): Promise<boolean> {
      const parts = name.split('/');
      for (let i = 1; i < parts.length; i++) await folderStore.create(db, mailboxId, parts.slice(0, i).join('/'), clock.now());
      return (await folderStore.create(db, mailboxId, name, clock.now())) !== undefined;
    },

    /** Deletes a folder; its live mail is expunged first (soft deletes with their events). */
    async deleteFolder(tenantId: number, mailboxId: number, folder: FolderRow): Promise<void> {
      const ids = (await sql<{ id: number }>`SELECT id FROM emails WHERE mailbox_id = ${mailboxId} AND folder = ${folder.name} AND deleted_at IS NULL`.execute(db)).rows.map((r) => r.id);
      for (const id of ids) await service.remove(tenantId, id).catch(() => undefined);
      await folderStore.remove(db, folder.id);
    },

    /** Renames a folder and those below it; their mail follows, each message an update for sync. */
    async renameFolder(mailboxId: number, from: string, to: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        await folderStore.rename(trx, mailboxId, from, to);
        const rows = (await sql<{ id: number; folder: string }>`SELECT id, folder FROM emails WHERE mailbox_id = ${mailboxId}
          AND (folder = ${from} OR substr(folder, 1, ${from.length + 1}) = ${from + '/'})`.execute(trx)).rows;
        for (const r of rows) {
          await trx.updateTable('emails').set({ folder: to + r.folder.slice(from.length), updated_seq: markers.next() }).where('id', '=', r.id).execute();
        }
        await markers.flush(trx);
      });
      changed(mailboxId);
    },

    setSubscribed: (folderId: number, on: boolean) => folderStore.setSubscribed(db, folderId, on),

    /** The mailbox's quota (MB, 0 = unlimited) and bytes used. */
    quota: (mailboxId: number) =>
      db.selectFrom('mailboxes').select(['quota_mb', 'used_bytes']).where('id', '=', mailboxId).executeTakeFirstOrThrow(),
  };
}
export type FolderMessages = ReturnType<typeof createFolderMessages>;
export type { FolderRow };
export type { SummaryRow } from './summary-rows.js';
