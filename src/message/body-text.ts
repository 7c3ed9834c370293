import { decodeUndeclared, splitHeaderBlock } from './headers.js';
import { decodeHtmlEntities } from './html-entities.js';

/** The most body text the raw fallback keeps. */
const MAX_FALLBACK_TEXT = 1024 * 1024;

/**
 * A plain-text rendering of an HTML body, for mail that has no text part (the snippet and the
 * search index need text). Deliberately simple: block ends become line breaks, tags go, entities
 * are decoded, runs of blank space shrink.
 */
export function htmlToText(html: string): string {
  const text = html
    .replace(/<(script|style|head|title)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|tr|li|h[1-6]|table|blockquote|pre)\s*>/gi, '\n')
    .replace(/<[^>]*>/g, '');
  return decodeHtmlEntities(text)
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * The body of a message that no MIME reading could decode (no header block, a multipart without
 * a boundary, ...): everything after the leading header lines, as text, so nothing readable is
 * lost. The raw bytes stay stored regardless.
 */
export function rawBodyText(raw: Buffer): string | null {
  const { consumed } = splitHeaderBlock(raw.subarray(0, Math.min(raw.length, 1024 * 1024)));
  let body = raw.subarray(consumed);
  if (body[0] === 0x0d && body[1] === 0x0a) body = body.subarray(2);
  else if (body[0] === 0x0a) body = body.subarray(1);
  if (body.length > MAX_FALLBACK_TEXT) body = body.subarray(0, MAX_FALLBACK_TEXT);
  const text = decodeUndeclared(body).replace(/\r\n/g, '\n').trim();
  return text === '' ? null : text;
}
