import { createHash } from 'node:crypto';

// Headers the composer writes itself from the stored fields; stored copies of them are not repeated.
const COMPOSED = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'message-id', 'date', 'mime-version', 'content-type', 'content-transfer-encoding', 'content-disposition']);

/** The fields of mail posted to `POST /v1/mail/inbound`, as the stored copy and the inbound row both hold them. */
export interface ComposeInput {
  fromName: string | null;
  fromEmail: string;
  toEmail: string;
  cc: string[];
  subject: string;
  messageId: string;
  receivedAt: string | number | Date;
  headers: Record<string, string | string[]>;
  bodyText: string | null;
  bodyHtml: string | null;
  attachments: Array<{ filename: string; contentType: string; content: Buffer; contentId: string | null; disposition: string | null }>;
}

/**
 * The RFC 5322 form of API mail, the one `GET /v1/emails/{id}/raw`, IMAP and forwards serve. The
 * multipart boundary is derived from the Message-ID instead of drawn at random, so the same fields
 * compose to the same bytes wherever they are composed (the stored copy and a forward of it).
 */
export async function composeApiMessage(m: ComposeInput): Promise<Buffer> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(m.headers)) if (!COMPOSED.has(k.toLowerCase())) headers[k] = v;
  const messageId = m.messageId.startsWith('<') ? m.messageId : `<${m.messageId}>`;
  // Loaded on first use: only API-posted mail is composed, and the module is ~2.5 MB of heap.
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer');
  const composer = new MailComposer({
    from: m.fromName ? { name: m.fromName, address: m.fromEmail } : m.fromEmail,
    to: m.toEmail,
    cc: m.cc,
    subject: m.subject,
    messageId,
    date: new Date(m.receivedAt),
    headers,
    text: m.bodyText ?? undefined,
    html: m.bodyHtml ?? undefined,
    baseBoundary: createHash('sha256').update(messageId).digest('hex').slice(0, 16),
    attachments: m.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.contentType,
      content: a.content,
      cid: a.contentId ?? undefined,
      contentDisposition: (a.disposition === 'inline' ? 'inline' : 'attachment') as 'inline' | 'attachment',
    })),
  } as ConstructorParameters<typeof MailComposer>[0]);
  return composer.compile().build();
}
