import { sql, type Insertable } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { StoredMessage } from '../inbound/message.js';
import { folderStore } from './folder-store.js';
import type { Markers } from './markers.js';
import type { EmailRowWrites } from './email-writes.js';
import type { AttachmentsTable, EmailContentsTable, EmailImapTable, EmailsFtsTable } from '../db/tables/emails.js';
import { INDEXED_BODY_CHARS, plainText, snippetOf } from '../message/text.js';

/** One copy to store: a message in one mailbox of a tenant. */
export interface Copy {
  tenantId: number;
  mailboxId: number;
  /** The inbound row holding the original bytes (SMTP mail), else null. */
  inboundId: number | null;
  toEmail: string;
  size: number;
  message: StoredMessage;
  /**
   * Filed rather than delivered: into this folder (made with the defaults when missing), read, and
   * free to repeat a message_id of its mailbox as APPENDed mail may (the Sent copy of a submission,
   * which a message sent to oneself also delivers to INBOX). Absent: delivered to INBOX.
   */
  filedIn?: string;
  /**
   * A delivered copy's folder (the pipeline's placement; default INBOX); one that does not exist
   * once the mailbox's default folders are made files into INBOX instead. Ignored when filed.
   */
  folder?: string;
  /** A delivered copy's stored flags and keywords, e.g. `$Junk`; `\Seen` among them stores it read. */
  keywords?: string[];
  /**
   * Bytes put in front of the message's own when it is read (the spam filter's trace header,
   * src/spam/header.ts): counted in `size` already, added here to IMAP's RFC822.SIZE of the bytes.
   */
  prefixBytes?: number;
  /** A further delivered copy of the message in the same mailbox (Sieve fileinto :copy): may repeat its message_id. */
  extra?: boolean;
}

/** A stored copy. */
export interface Created {
  id: number;
  tenantId: number;
  mailboxId: number;
  size: number;
  inboundId: number | null;
}

const CHUNK = 200;

/** The folder a copy goes to. */
const folderOf = (c: Copy) => c.filedIn ?? c.folder ?? 'INBOX';

/**
 * The copies with each delivered one's folder made sure of: a folder other than INBOX that the
 * mailbox does not have (after its default folders are made) becomes INBOX. Only copies placed
 * outside INBOX cost a query.
 */
async function existingFolders(trx: Db, copies: Copy[], now: number): Promise<Copy[]> {
  const placed = copies.filter((c) => c.filedIn === undefined && c.folder !== undefined && c.folder !== 'INBOX');
  if (placed.length === 0) return copies;
  const mailboxIds = [...new Set(placed.map((c) => c.mailboxId))];
  await folderStore.ensureDefaults(trx, mailboxIds, now);
  const names = [...new Set(placed.map((c) => c.folder!))];
  const rows = await trx.selectFrom('folders').select(['mailbox_id', 'name'])
    .where('mailbox_id', 'in', mailboxIds).where('name', 'in', names).execute();
  const have = new Set(rows.map((r) => `${r.name}\u0000${r.mailbox_id}`));
  return copies.map((c) => (placed.includes(c) && !have.has(`${c.folder}\u0000${c.mailboxId}`) ? { ...c, folder: 'INBOX' } : c));
}

/**
 * A UID in its folder (INBOX unless filed elsewhere) for each copy, reserved in one statement per
 * folder; a mailbox whose folders are not made yet gets them first. A copy skipped as a duplicate
 * leaves a gap, which IMAP allows (UIDs only have to rise).
 */
async function folderUids(trx: Db, copies: Copy[], now: number): Promise<number[]> {
  const { reserveUids } = folderStore;
  const byFolder = new Map<string, Map<number, number>>();
  for (const c of copies) {
    const counts = byFolder.get(folderOf(c)) ?? new Map<number, number>();
    counts.set(c.mailboxId, (counts.get(c.mailboxId) ?? 0) + 1);
    byFolder.set(folderOf(c), counts);
  }
  const next = new Map<string, number>();
  for (const [folder, counts] of byFolder) {
    let first = await reserveUids(trx, folder, counts);
    const missing = [...counts.keys()].filter((m) => !first.has(m));
    if (missing.length > 0) {
      await folderStore.ensureDefaults(trx, missing, now);
      const more = await reserveUids(trx, folder, new Map(missing.map((m) => [m, counts.get(m)!])));
      first = new Map([...first, ...more]);
    }
    for (const [m, u] of first) next.set(`${folder}\u0000${m}`, u);
  }
  return copies.map((c) => {
    const key = `${folderOf(c)}\u0000${c.mailboxId}`;
    const u = next.get(key);
    if (u === undefined) throw new Error(`mailbox ${c.mailboxId} has no folder ${folderOf(c)}`);
    next.set(key, u + 1);
    return u;
  });
}

async function inChunks<T>(rows: T[], insert: (part: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await insert(rows.slice(i, i + CHUNK));
}

/**
 * Stores copies of messages inside the caller's transaction: the narrow email row (skipped when
 * the mailbox already has the message_id), its contents, attachments, IMAP summary and search index entries,
 * the index written in multi-row statements because per-statement cost dominates FTS5 inserts.
 */
export function createEmailWriter({ store, markers, clock }: { store: EmailRowWrites; markers: Markers; clock: Clock }) {
  return {
    async storeCopies(trx: Db, given: Copy[]): Promise<Created[]> {
      if (given.length === 0) return [];
      await markers.ready(trx);
      const tenants = [...new Set(given.map((c) => c.tenantId))];
      const state = await store.searchState(trx, tenants);
      const changed = new Set<number>();
      const contents: Insertable<EmailContentsTable>[] = [];
      const attachments: Insertable<AttachmentsTable>[] = [];
      const fts: EmailsFtsTable[] = [];
      const imap: EmailImapTable[] = [];
      const created: Created[] = [];
      const now = clock.now();
      const copies = await existingFolders(trx, given, now);
      const first = await store.nextEmailId(trx);
      const uids = await folderUids(trx, copies, now);
      const texts = copies.map((c) => plainText(c.message.bodyText, c.message.bodyHtml));
      const rows = copies.map((c, i) => {
        const m = c.message;
        const prev = state.get(c.tenantId);
        const receivedMax = prev === undefined ? m.receivedAt : Math.max(prev, m.receivedAt);
        state.set(c.tenantId, receivedMax);
        if (prev !== receivedMax) changed.add(c.tenantId);
        return {
          id: first + i, tenant_id: c.tenantId, mailbox_id: c.mailboxId, message_id: m.messageId,
          from_email: m.fromEmail, from_name: m.fromName, to_email: c.toEmail, subject: m.subject,
          snippet: snippetOf(texts[i]), received_at: m.receivedAt, received_max: receivedMax, size: c.size,
          has_attachments: m.attachments.length > 0 ? 1 : 0, read_at: null, deleted_at: null,
          updated_seq: markers.next(), created_at: now, uid: uids[i],
        };
      });
      // Filed copies carry their folder and imported = 1 (a few per batch: one plain insert); delivered
      // ones placed outside INBOX or with keywords carry those; the rest (nearly all) the defaults.
      const inInbox = (c: Copy) => c.filedIn === undefined && folderOf(c) === 'INBOX' && !c.keywords?.length && !c.extra;
      const delivered = rows.filter((_, i) => inInbox(copies[i]));
      const placed = rows.flatMap((r, i) => {
        const c = copies[i];
        // \Seen is the read time, not a stored flag (a Sieve `addflag "\\Seen"`).
        const seen = c.keywords?.includes('\\Seen') ?? false;
        return c.filedIn !== undefined || inInbox(c) ? [] : [{ ...r, folder: folderOf(c), flags: (c.keywords ?? []).filter((k) => k !== '\\Seen').join(' '), read_at: seen ? now : null, imported: c.extra ? 1 : 0 }];
      });
      const filed = rows.flatMap((r, i) => {
        const folder = copies[i].filedIn;
        return folder === undefined ? [] : [{ ...r, folder, read_at: now, imported: 1 }];
      });
      const stored = await store.insertEmails(trx, delivered);
      if (placed.length > 0) {
        // Delivered mail: a message_id its mailbox already has is skipped, as in insertEmails.
        const r = await trx.insertInto('emails').values(placed)
          .onConflict((oc) => oc.columns(['mailbox_id', 'message_id']).where(sql<boolean>`imported = 0`).doNothing())
          .returning('id').execute();
        for (const x of r) stored.add(Number(x.id));
      }
      if (filed.length > 0) {
        await trx.insertInto('emails').values(filed).execute();
        for (const r of filed) stored.add(r.id);
      }
      copies.forEach((c, i) => {
        const id = first + i;
        if (!stored.has(id)) return;
        const m = c.message;
        contents.push({
          email_id: id, inbound_id: c.inboundId, cc: JSON.stringify(m.cc), bcc: JSON.stringify(m.bcc),
          headers: JSON.stringify(m.headers), auth: m.auth ? JSON.stringify(m.auth) : null,
          body_text: m.bodyText, body_html: m.bodyHtml,
        });
        for (const a of m.attachments) {
          attachments.push({
            email_id: id, filename: a.filename, content_type: a.contentType, size: a.size,
            content_id: a.contentId, disposition: a.disposition, sha256: a.sha256,
          });
        }
        // Only raw SMTP mail carries a summary (made by the parser from the bytes IMAP serves).
        if (m.imap && c.inboundId !== null) imap.push({ email_id: id, size: m.imap.size + (c.prefixBytes ?? 0), envelope: m.imap.envelope, bodystructure: m.imap.bodystructure });
        fts.push({ rowid: id, subject: m.subject, body: texts[i].slice(0, INDEXED_BODY_CHARS), from_email: m.fromEmail, from_name: m.fromName ?? '' });
        created.push({ id, tenantId: c.tenantId, mailboxId: c.mailboxId, size: c.size, inboundId: c.inboundId });
      });
      await inChunks(contents, (p) => store.insertContents(trx, p));
      await inChunks(attachments, (p) => store.insertAttachments(trx, p));
      await inChunks(fts, (p) => store.indexFts(trx, p));
      await inChunks(imap, (p) => store.saveImap(trx, p));
      for (const t of changed) await store.saveSearchState(trx, t, state.get(t)!);
      // PostgreSQL: the newest marker back to its row before the caller commits (markers.ts); SQLite: nothing.
      await markers.flush(trx);
      return created;
    },
  };
}
export type EmailWriter = ReturnType<typeof createEmailWriter>;
