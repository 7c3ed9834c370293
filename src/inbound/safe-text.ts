import { safeText } from '../db/storable-text.js';
import type { InboundAttachment, InboundMessage } from './types.js';

export { safeText };

const safeOrNull = (s: string | null | undefined) => (typeof s === 'string' ? safeText(s) : s ?? null);

/** Every string of a JSON-like value (keys too) made safe; other values as they are. */
export function safeStrings<T>(value: T): T {
  if (typeof value === 'string') return safeText(value) as T;
  if (Array.isArray(value)) return value.map((v) => safeStrings(v)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[safeText(k)] = safeStrings(v);
    return out as T;
  }
  return value;
}

function safeAttachment(a: InboundAttachment): InboundAttachment {
  return {
    ...a, filename: safeText(a.filename), contentType: safeText(a.contentType),
    contentId: safeOrNull(a.contentId), disposition: safeOrNull(a.disposition),
  };
}

/**
 * A parsed or posted message with every text field safe (see safeText): what is stored, indexed
 * and answered. Attachment contents are bytes and stay as they are.
 */
export function safeMessage(m: InboundMessage): InboundMessage {
  const imap = m.imap && [m.imap.envelope, m.imap.bodystructure].every((s) => safeText(s) === s) ? m.imap : undefined;
  return {
    ...m,
    messageId: safeText(m.messageId),
    fromEmail: safeText(m.fromEmail),
    fromName: safeOrNull(m.fromName),
    toEmail: safeText(m.toEmail),
    cc: m.cc.map(safeText),
    bcc: m.bcc.map(safeText),
    subject: safeText(m.subject),
    bodyText: safeOrNull(m.bodyText),
    bodyHtml: safeOrNull(m.bodyHtml),
    headers: safeStrings(m.headers),
    attachments: m.attachments.map(safeAttachment),
    auth: safeStrings(m.auth),
    // IMAP's summary is wire text whose literals count bytes: one that is not safe is left to its first FETCH.
    ...(m.imap ? { imap } : {}),
  };
}
