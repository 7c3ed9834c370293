import { addressProblem, normalizeAddress } from '../message/address.js';
import { unprocessable } from '../errors.js';
import { safeMessage } from '../inbound/safe-text.js';
import { MAX_ATTACHMENT_BYTES, type InboundBody } from './schemas.js';
import type { InboundAttachment, InboundMessage } from '../inbound/types.js';

// A UTF-16 surrogate without its partner: JSON can smuggle one in with \uD800, UTF-8 cannot carry it.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Throws 422 naming the field when a string holds a lone surrogate (not encodable as UTF-8). */
function wellFormed(field: string, value: string | null | undefined): void {
  if (value && LONE_SURROGATE.test(value)) throw unprocessable(`${field} is not valid Unicode text`);
}

/** A cc/bcc value (comma list or array) as a list of checked addresses. */
export function addressList(field: string, value: string | string[] | null | undefined): string[] {
  if (value === null || value === undefined) return [];
  const items = typeof value === 'string' ? value.split(',') : value;
  const out: string[] = [];
  items.forEach((raw, i) => {
    const a = raw.trim();
    if (a === '' && typeof value === 'string') return;
    const name = typeof value === 'string' ? field : `${field}[${i}]`;
    const problem = addressProblem(a);
    if (problem) throw unprocessable(`${name} ${problem}${typeof value === 'string' ? ` (${JSON.stringify(a.slice(0, 80))})` : ''}`);
    out.push(a);
  });
  if (out.length > 1000) throw unprocessable(`${field} must have at most 1000 addresses`);
  return out;
}

/** A Content-Type with its type/subtype lower-cased and its parameters as given. */
function mediaType(value: string): string {
  const semi = value.indexOf(';');
  return semi < 0 ? value.trim().toLowerCase() : `${value.slice(0, semi).trim().toLowerCase()}${value.slice(semi).trimEnd()}`;
}

/** Decodes strict base64 (line breaks allowed, as in MIME); throws 422 naming the field. */
export function decodeBase64(field: string, text: string): Buffer {
  const compact = text.includes('\n') || text.includes('\r') || text.includes(' ') ? text.replace(/[\r\n ]/g, '') : text;
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) throw unprocessable(`${field} must be base64`);
  return Buffer.from(compact, 'base64');
}

/**
 * Turns a schema-valid inbound body into the normalised message of ingest: addresses checked and
 * lower-cased where they route mail, attachments decoded (25 MB in total at most), text checked
 * for well-formed Unicode, unknown fields dropped.
 */
export function normalizeInbound(body: InboundBody): InboundMessage {
  const receivedAt = Date.parse(body.received_at);
  if (Number.isNaN(receivedAt)) throw unprocessable('received_at must be an ISO 8601 date-time such as 2024-01-31T12:00:00Z');
  for (const f of ['message_id', 'subject', 'from_name', 'body_text', 'body_html'] as const) wellFormed(f, body[f]);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(body.headers ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) wellFormed(`headers.${name}`, v);
    headers[name] = value;
  }
  const attachments: InboundAttachment[] = [];
  let total = 0;
  (body.attachments ?? []).forEach((a, i) => {
    wellFormed(`attachments[${i}].filename`, a.filename);
    wellFormed(`attachments[${i}].content_id`, a.content_id);
    const content = decodeBase64(`attachments[${i}].content`, a.content);
    total += content.length;
    if (total > MAX_ATTACHMENT_BYTES) throw unprocessable(`attachments exceed ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MB in total`);
    attachments.push({
      filename: a.filename,
      contentType: mediaType(a.content_type),
      content,
      contentId: a.content_id ?? null,
      disposition: a.disposition ?? 'attachment',
    });
  });
  // NUL is valid JSON text but no database's: it is stored as U+FFFD, as SMTP mail's (safe-text.ts).
  return safeMessage({
    messageId: body.message_id.trim(),
    fromEmail: body.from_email,
    fromName: body.from_name ?? null,
    toEmail: normalizeAddress(body.to_email),
    cc: addressList('cc', body.cc),
    bcc: addressList('bcc', body.bcc),
    subject: body.subject,
    receivedAt,
    bodyText: body.body_text ?? null,
    bodyHtml: body.body_html ?? null,
    headers,
    attachments,
    auth: null,
  });
}
