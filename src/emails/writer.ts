import type { Insertable } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { StoredMessage } from '../ingest/message.js';
import { folderStore } from './folder-store.js';
import type { Markers } from './markers.js';
import type { EmailStore } from './store.js';
import type { AttachmentsTable, EmailContentsTable, EmailImapTable, EmailsFtsTable } from './tables.js';
import { INDEXED_BODY_CHARS, plainText, snippetOf } from './text.js';

/** One copy to store: a message in one mailbox of a tenant. */
export interface Copy {
  tenantId: number;
  mailboxId: number;
  /** The inbound row holding the original bytes (SMTP mail), else null. */
  inboundId: number | null;
  toEmail: string;
  size: number;
  message: StoredMessage;
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

/**
 * A UID in its mailbox's INBOX for each copy (delivered mail goes there), reserved in one statement;
 * a mailbox whose folders are not made yet gets them first. A copy skipped as a duplicate leaves a
 * gap, which IMAP allows (UIDs only have to rise).
 */
async function inboxUids(trx: Db, copies: Copy[], now: number): Promise<number[]> {
  const counts = new Map<number, number>();
  for (const c of copies) counts.set(c.mailboxId, (counts.get(c.mailboxId) ?? 0) + 1);
  let first = await folderStore.reserveUids(trx, 'INBOX', counts);
  const missing = [...counts.keys()].filter((m) => !first.has(m));
  if (missing.length > 0) {
    await folderStore.ensureDefaults(trx, missing, now);
    const more = await folderStore.reserveUids(trx, 'INBOX', new Map(missing.map((m) => [m, counts.get(m)!])));
    first = new Map([...first, ...more]);
  }
  return copies.map((c) => { const u = first.get(c.mailboxId)!; first.set(c.mailboxId, u + 1); return u; });
}

async function inChunks<T>(rows: T[], insert: (part: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await insert(rows.slice(i, i + CHUNK));
}

/**
 * Stores copies of messages inside the caller's transaction: the narrow email row (skipped when
 * the mailbox already has the message_id), its contents, attachments, IMAP summary and search index entries,
 * the index written in multi-row statements because per-statement cost dominates FTS5 inserts.
 */
export function createEmailWriter({ store, markers, clock }: { store: EmailStore; markers: Markers; clock: Clock }) {
  return {
    async storeCopies(trx: Db, copies: Copy[]): Promise<Created[]> {
      if (copies.length === 0) return [];
      await markers.ready(trx);
      const tenants = [...new Set(copies.map((c) => c.tenantId))];
      const state = await store.searchState(trx, tenants);
      const changed = new Set<number>();
      const contents: Insertable<EmailContentsTable>[] = [];
      const attachments: Insertable<AttachmentsTable>[] = [];
      const fts: EmailsFtsTable[] = [];
      const imap: EmailImapTable[] = [];
      const created: Created[] = [];
      const now = clock.now();
      const first = await store.nextEmailId(trx);
      const uids = await inboxUids(trx, copies, now);
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
      const stored = await store.insertEmails(trx, rows);
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
        if (m.imap && c.inboundId !== null) imap.push({ email_id: id, size: m.imap.size, envelope: m.imap.envelope, bodystructure: m.imap.bodystructure });
        fts.push({ rowid: id, subject: m.subject, body: texts[i].slice(0, INDEXED_BODY_CHARS), from_email: m.fromEmail, from_name: m.fromName ?? '' });
        created.push({ id, tenantId: c.tenantId, mailboxId: c.mailboxId, size: c.size, inboundId: c.inboundId });
      });
      await inChunks(contents, (p) => store.insertContents(trx, p));
      await inChunks(attachments, (p) => store.insertAttachments(trx, p));
      await inChunks(fts, (p) => store.indexFts(trx, p));
      await inChunks(imap, (p) => store.saveImap(trx, p));
      for (const t of changed) await store.saveSearchState(trx, t, state.get(t)!);
      return created;
    },
  };
}
export type EmailWriter = ReturnType<typeof createEmailWriter>;
