import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { forbidden, notFound } from '../errors.js';
import { iso } from '../format.js';
import { imapSummary } from '../message/summary.js';
import type { BlobStore } from '../ingest/blobs.js';
import { composeApiMessage } from './compose.js';
import { contentDisposition, LINK_TTL_MS, safeContentType, type LinkSigner } from './links.js';
import type { EmailStore } from './store.js';
import { spamStatusField, rewriteRaw } from '../spam/header.js';
import { verdictOfEmail } from '../spam/verdicts.js';
import type { SpamVerdict } from '../inbound/spam-verdict.js';
import { Readable as ReadableStream } from 'node:stream';


/** A file to stream to the client. */
export interface Download {
  body: Readable;
  size: number;
  contentType: string;
  disposition: string;
}

/** Attachment links and downloads, and the raw RFC 5322 form of stored mail. */
export function createEmailFiles({ db, store, blobs, signer, clock, publicUrl }: {
  db: Db; store: EmailStore; blobs: BlobStore; signer: LinkSigner; clock: Clock; publicUrl: string;
}) {
  const files = {
    /** A signed link to one attachment of a live email of the tenant (15 minutes); 404 otherwise. */
    async link(tenantId: number, emailId: number, attachmentId: number) {
      const a = await store.attachment(db, tenantId, emailId, attachmentId);
      if (!a) throw notFound('Attachment not found');
      const expires = clock.now() + LINK_TTL_MS;
      const token = signer.sign({ tenantId, emailId, attachmentId, expires });
      return { url: `${publicUrl}/api/v1/attachments/download/${token}`, expires_at: iso(expires) };
    },

    /** The file a token grants: 403 for an altered or expired token, 404 when the attachment is gone. */
    async download(token: string): Promise<Download> {
      const grant = signer.verify(token);
      if (!grant) throw forbidden('Invalid download link');
      if (clock.now() > grant.expires) throw forbidden('Download link expired');
      const a = await store.attachment(db, grant.tenantId, grant.emailId, grant.attachmentId);
      if (!a || !(await blobs.hasBlob(a.sha256))) throw notFound('Attachment not found');
      return { body: blobs.openBlob(a.sha256), size: a.size, contentType: safeContentType(a.content_type), disposition: contentDisposition(a.filename) };
    },

    /**
     * The message as RFC 5322 bytes: SMTP mail exactly as received (with our Received: header);
     * API mail rendered from its stored fields and attachments.
     */
    async raw(tenantId: number, id: number): Promise<{ body: Buffer | Readable; size?: number }> {
      const src = await store.rawOf(db, tenantId, id);
      if (!src) throw notFound('Email not found');
      if (src.inbound_id !== null) {
        // A classified copy is read with the spam filter's trace header in front (src/spam/header.ts).
        const spam = await verdictOfEmail(db, id);
        if (src?.raw) {
          const body = spam ? rewriteRaw(src.raw, spam) : src.raw;
          return { body, size: body.length };
        }
        if (src?.raw_path) {
          const file = blobs.rawFile(src.raw_path);
          // Checked before the answer starts: a stream that fails after the headers can only cut the connection.
          const size = await stat(file).then((s) => s.size, () => null);
          if (size === null) throw notFound('Raw message file is missing from the data directory');
          if (!spam) return { body: createReadStream(file), size };
          // A message too large to hold: its header block is rewritten (our trace field after
          // Return-Path and Received, outside X-Spam-* fields cut) and the rest streams as it is.
          const head = await readHead(file);
          const headerEnd = head.indexOf('\r\n\r\n');
          if (headerEnd < 0) {
            const field = spamStatusField(spam);
            return { body: ReadableStream.from((async function* () { yield field; yield* createReadStream(file); })()), size: size + field.length };
          }
          const front = rewriteRaw(head.subarray(0, headerEnd + 4), spam);
          const rest = createReadStream(file, { start: headerEnd + 4 });
          return { body: ReadableStream.from((async function* () { yield front; yield* rest; })()), size: size - (headerEnd + 4) + front.length };
        }
      }
      // API and APPENDed mail: the bytes kept at first rendering (or given by APPEND), so they never
      // change; a classified copy is read with the trace header in front, as SMTP mail is.
      const spam = await verdictOfEmail(db, id);
      const kept = await stableRaw(tenantId, id, spam);
      const body = spam ? rewriteRaw(kept, spam) : kept;
      return { body, size: body.length };
    },

    /** The message's RFC 5322 bytes whole (IMAP FETCH reads them at random offsets). */
    async rawBytes(tenantId: number, id: number): Promise<Buffer> {
      const r = await files.raw(tenantId, id);
      if (Buffer.isBuffer(r.body)) return r.body;
      const parts: Buffer[] = [];
      for await (const c of r.body) parts.push(c as Buffer);
      return Buffer.concat(parts);
    },
  };

  /**
   * The kept bytes of mail without SMTP bytes; rendered and kept on first use (the first kept wins a
   * race), with IMAP's summary of them, so FETCH reads it instead of parsing the bytes.
   */
  async function stableRaw(tenantId: number, id: number, spam: SpamVerdict | null): Promise<Buffer> {
    const kept = await db.selectFrom('email_raw').select('raw').where('email_id', '=', id).executeTakeFirst();
    if (kept) return kept.raw;
    // The email's fields only for its first rendering.
    const e = await store.get(db, tenantId, id);
    if (!e) throw notFound('Email not found');
    const rendered = await render(e);
    await db.insertInto('email_raw').values({ email_id: e.id, raw: rendered }).onConflict((oc) => oc.column('email_id').doNothing()).execute();
    const now = (await db.selectFrom('email_raw').select('raw').where('email_id', '=', e.id).executeTakeFirst())?.raw ?? rendered;
    // The summary of the bytes as read: with the spam trace header in front when there is one.
    await store.saveImap(db, [{ email_id: e.id, ...imapSummary(spam ? rewriteRaw(now, spam) : now) }]);
    return now;
  }

  /** API mail rendered from its stored fields and attachments. */
  async function render(e: NonNullable<Awaited<ReturnType<EmailStore['get']>>>): Promise<Buffer> {
    const attachments = await store.attachmentsOf(db, e.id);
    return composeApiMessage({
      fromName: e.from_name, fromEmail: e.from_email, toEmail: e.to_email, cc: JSON.parse(e.cc) as string[],
      subject: e.subject, messageId: e.message_id, receivedAt: e.received_at,
      headers: JSON.parse(e.headers) as Record<string, string | string[]>, bodyText: e.body_text, bodyHtml: e.body_html,
      attachments: await Promise.all(attachments.map(async (a) => ({
        filename: a.filename, contentType: a.content_type, content: await blobs.readBlob(a.sha256), contentId: a.content_id, disposition: a.disposition,
      }))),
    });
  }

  return files;
}
export type EmailFiles = ReturnType<typeof createEmailFiles>;

/** Bytes a header block is looked for in, at the start of a raw file (MAX_HEAD_BYTES of the parser). */
const HEAD_READ_BYTES = 1024 * 1024;

/** The first bytes of a raw file, where its header block is. */
async function readHead(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(HEAD_READ_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
