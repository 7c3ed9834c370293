import type { Readable } from 'node:stream';
import { MailParser, type AttachmentStream, type MailParserOptions, type ParsedMail } from 'mailparser';
import type { BlobSpool } from '../blobs.js';
import type { SpooledBlob } from '../../inbound/types.js';

/** mailparser's (untyped) last step of simpleParser. */
interface ImageLinks {
  updateImageLinks(
    replace: (a: { content: unknown; contentType: string }, done: (err: Error | null, link: string | false) => void) => void,
    done: (err: Error | null, html: string | false) => void,
  ): void;
}

/** Attachment bytes gathered in memory up to this size; past it, the rest goes to a file as it is decoded. */
export const SPOOL_ATTACHMENT_BYTES = 1024 * 1024;

/** A parsed message whose attachments' content is in memory or, when large, already in a file. */
export type ReadMail = Omit<ParsedMail, 'attachments'> & { attachments: Array<Omit<ParsedMail['attachments'][number], 'content'> & { content: Buffer | SpooledBlob }> };

/**
 * mailparser's simpleParser, except that an attachment past SPOOL_ATTACHMENT_BYTES is written to a
 * blob spool as it is decoded instead of gathered (simpleParser concatenates every attachment in
 * memory: a 25 MB one cost the parser thread its size, twice over while it was being joined).
 * Otherwise the same events in the same order, so the same result. On a failure the spooled files
 * are discarded. Without a spool, all in memory.
 */
export function readMail(input: Buffer | Readable, options: MailParserOptions, spool?: () => Promise<BlobSpool>): Promise<ReadMail> {
  return new Promise((resolve, reject) => {
    const parser = new MailParser(options);
    const mail = { attachments: [] } as unknown as ReadMail;
    const spools: BlobSpool[] = [];
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      parser.destroy();
      if (typeof (input as Readable).destroy === 'function') (input as Readable).destroy();
      void Promise.all(spools.map((s) => s.discard())).finally(() => reject(err));
    };

    /** The attachment's bytes, in memory or (past the threshold) in a spooled file. */
    async function gather(content: Readable): Promise<Buffer | SpooledBlob> {
      const chunks: Buffer[] = [];
      let length = 0;
      let file: BlobSpool | null = null;
      for await (const chunk of content as AsyncIterable<Buffer>) {
        if (file) { await file.write(chunk); continue; }
        chunks.push(chunk);
        length += chunk.length;
        if (spool && length > SPOOL_ATTACHMENT_BYTES) {
          file = await spool();
          spools.push(file);
          for (const c of chunks.splice(0)) await file.write(c);
        }
      }
      return file ? file.finish() : Buffer.concat(chunks, length);
    }

    parser.on('error', fail);
    parser.on('headers', (headers) => {
      mail.headers = headers;
      mail.headerLines = (parser as unknown as { headerLines: ReadMail['headerLines'] }).headerLines;
    });

    let reading = false;
    const reader = (): void => {
      reading = true;
      const data = parser.read() as (AttachmentStream | { type: 'text'; text?: string; html?: string; textAsHtml?: string }) | null;
      if (data === null) {
        reading = false;
        return;
      }
      if (data.type === 'text') {
        for (const key of ['text', 'html', 'textAsHtml'] as const) if (key in data) (mail as Record<string, unknown>)[key] = data[key];
        reader();
        return;
      }
      const attachment = data as AttachmentStream;
      (mail.attachments as unknown[]).push(attachment);
      gather(attachment.content as Readable).then((content) => {
        (attachment as unknown as { content: Buffer | SpooledBlob }).content = content;
        attachment.release();
        reader();
      }, fail);
    };
    parser.on('readable', () => { if (!reading) reader(); });

    parser.on('end', () => {
      for (const key of ['subject', 'references', 'date', 'to', 'from', 'to', 'cc', 'bcc', 'message-id', 'in-reply-to', 'reply-to']) {
        if (mail.headers?.has(key)) (mail as Record<string, unknown>)[key.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())] = mail.headers.get(key);
      }
      // As simpleParser: the HTML once cid: links are resolved (left as they are under skipImageLinks;
      // otherwise inlined as data: URLs from attachments held in memory).
      (parser as unknown as ImageLinks).updateImageLinks(
        (a, done) => done(null, Buffer.isBuffer(a.content) ? `data:${a.contentType};base64,${a.content.toString('base64')}` : false),
        (err: Error | null, html: string | false) => {
          if (err) return fail(err);
          (mail as Record<string, unknown>).html = html;
          if (settled) return;
          settled = true;
          resolve(mail);
        },
      );
    });

    if (Buffer.isBuffer(input)) parser.end(input);
    else input.once('error', fail).pipe(parser);
  });
}
