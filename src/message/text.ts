import { decodeHtmlEntities } from './html-entities.js';

/** Length of a list item's snippet (DECISIONS.md section 8). */
export const SNIPPET_CHARS = 200;
/** How much body text the search index takes per email; the rest is stored but not searchable. */
export const INDEXED_BODY_CHARS = 256 * 1024;

/**
 * Plain text of an HTML body, good enough for a snippet and the search index (not for display;
 * the stored text of a delivered message is body-text.ts `htmlToText`).
 */
export function htmlSearchText(html: string): string {
  return decodeHtmlEntities(html
    .replace(/<(script|style|head|title)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(br|\/p|\/div|\/li|\/tr|\/h[1-6])\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, ' '));
}

/** The searchable and previewable text of a message: its text body, else its HTML body as text. */
export function plainText(bodyText: string | null, bodyHtml: string | null): string {
  // `\S` finds the first non-space without the copy trim() makes of every body.
  if (bodyText && /\S/.test(bodyText)) return bodyText;
  return bodyHtml ? htmlSearchText(bodyHtml) : '';
}

/** Whether a UTF-16 unit is whitespace as a regular expression's `\s` has it. */
function isSpace(c: number): boolean {
  if (c === 32 || (c >= 9 && c <= 13)) return true;
  return c >= 0xa0 && (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029
    || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff);
}

/**
 * The first SNIPPET_CHARS characters of the text, whitespace collapsed, never splitting a surrogate
 * pair. One pass over the start of the text (the regular expressions it replaces cost ~7 µs per
 * stored email on the storage thread); a lone surrogate counts as one character, as Array.from
 * counts it.
 */
export function snippetOf(text: string): string {
  // Whitespace runs collapse, so the first SNIPPET_CHARS * 4 units are plenty (as before).
  const limit = Math.min(text.length, SNIPPET_CHARS * 4);
  let out = '';
  let chars = 0;
  let i = 0;
  while (chars < SNIPPET_CHARS) {
    while (i < limit && isSpace(text.charCodeAt(i))) i++;
    if (i >= limit) break;
    // A run of whitespace between words is one space (and none at the start or the end).
    if (out.length > 0) {
      out += ' ';
      if (++chars >= SNIPPET_CHARS) break;
    }
    const start = i;
    while (i < limit && chars < SNIPPET_CHARS) {
      const c = text.charCodeAt(i);
      if (isSpace(c)) break;
      i += c >= 0xd800 && c <= 0xdbff && i + 1 < limit && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
      chars++;
    }
    out += text.slice(start, i);
  }
  return out;
}
