import type { InboundAttachment, InboundMessage } from './types.js';

/** U+FFFD, what a mail client shows for a character it cannot read. */
const REPLACEMENT = '\uFFFD';
/** NUL, or a UTF-16 surrogate without its partner (no UTF-8 form; JSON and some charsets make them). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** NUL or any surrogate: the quick test before the exact one. */
const SUSPECT = /[\u0000\uD800-\uDFFF]/;

/**
 * Text as every database stores it alike: NUL and lone surrogates become U+FFFD. PostgreSQL
 * refuses both in a text value (`invalid byte sequence for encoding "UTF8": 0x00`), which once
 * held a whole ingest batch back; SQLite would store them, so the same text is written to both and
 * their answers stay identical. Invalid UTF-8 bytes never get here as such: decoding already turned
 * them into U+FFFD. The raw message bytes are not text and are never changed.
 */
export function safeText(s: string): string {
  // The common case (no NUL, no surrogate) pays one scan and allocates nothing.
  return SUSPECT.test(s) ? s.replace(UNSTORABLE, REPLACEMENT) : s;
}

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
