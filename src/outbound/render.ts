import { composeApiMessage } from '../emails/compose.js';
import type { StoredMessage } from '../inbound/message.js';

/**
 * The RFC 5322 form of mail posted to `POST /v1/mail/inbound`: the same composition as
 * `GET /v1/emails/{id}/raw` (src/emails/compose.ts), so a forward carries the bytes the stored copy
 * serves. Forwards render it once and keep the bytes (outbound_messages), so every try and every
 * recipient sends the same message.
 */
export async function renderApiMessage(m: StoredMessage, readBlob: (sha256: string) => Promise<Buffer>): Promise<Buffer> {
  return composeApiMessage({
    fromName: m.fromName, fromEmail: m.fromEmail, toEmail: m.toEmail, cc: m.cc, subject: m.subject,
    messageId: m.messageId, receivedAt: m.receivedAt, headers: m.headers, bodyText: m.bodyText ?? null, bodyHtml: m.bodyHtml ?? null,
    attachments: await Promise.all(m.attachments.map(async (a) => ({
      filename: a.filename, contentType: a.contentType, content: await readBlob(a.sha256), contentId: a.contentId ?? null, disposition: a.disposition ?? null,
    }))),
  });
}
