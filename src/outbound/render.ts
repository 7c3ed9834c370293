import type { StoredMessage } from '../ingest/message.js';

// Headers the composer writes itself from the stored fields; stored copies of them are not repeated.
const COMPOSED = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'message-id', 'date', 'mime-version', 'content-type', 'content-transfer-encoding', 'content-disposition']);

/**
 * The RFC 5322 form of mail posted to `POST /v1/mail/inbound`, composed the way
 * `GET /v1/emails/{id}/raw` composes a stored copy (src/emails/files.ts): the same fields, headers
 * and attachments. Forwards render it once and keep the bytes (outbound_messages), so every try
 * and every recipient sends the same message.
 */
export async function renderApiMessage(m: StoredMessage, readBlob: (sha256: string) => Promise<Buffer>): Promise<Buffer> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(m.headers)) if (!COMPOSED.has(k.toLowerCase())) headers[k] = v;
  const messageId = m.messageId.startsWith('<') ? m.messageId : `<${m.messageId}>`;
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
    attachments: await Promise.all(m.attachments.map(async (a) => ({
      filename: a.filename,
      contentType: a.contentType,
      content: await readBlob(a.sha256),
      cid: a.contentId ?? undefined,
      contentDisposition: (a.disposition === 'inline' ? 'inline' : 'attachment') as 'inline' | 'attachment',
    }))),
  });
  return composer.compile().build();
}
