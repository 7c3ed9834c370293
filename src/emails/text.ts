/** Length of a list item's snippet (DECISIONS.md section 8). */
export const SNIPPET_CHARS = 200;
/** How much body text the search index takes per email; the rest is stored but not searchable. */
export const INDEXED_BODY_CHARS = 256 * 1024;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Plain text of an HTML body, good enough for a snippet and the search index (not for display). */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head|title)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(br|\/p|\/div|\/li|\/tr|\/h[1-6])\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (m, e: string) => {
      if (e[0] !== '#') return ENTITIES[e.toLowerCase()] ?? m;
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : ' ';
    });
}

/** The searchable and previewable text of a message: its text body, else its HTML body as text. */
export function plainText(bodyText: string | null, bodyHtml: string | null): string {
  if (bodyText && bodyText.trim() !== '') return bodyText;
  return bodyHtml ? htmlToText(bodyHtml) : '';
}

/** The first SNIPPET_CHARS characters of the text, whitespace collapsed, never splitting a surrogate pair. */
export function snippetOf(text: string): string {
  const collapsed = text.slice(0, SNIPPET_CHARS * 4).replace(/\s+/g, ' ').trim();
  if (collapsed.length <= SNIPPET_CHARS) return collapsed;
  // Counts code points the way Array.from does (a lone surrogate is one), without building an array per email.
  let end = 0;
  for (let n = 0; n < SNIPPET_CHARS && end < collapsed.length; n++) {
    const c = collapsed.charCodeAt(end);
    end += c >= 0xd800 && c <= 0xdbff && (collapsed.charCodeAt(end + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return collapsed.slice(0, end);
}
