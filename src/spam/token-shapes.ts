/**
 * Features of a message's form rather than its words, after SpamBayes' tokenizer (issue 43): how
 * its header fields are spelled (encoding, MIME boundary, Message-ID and Date shapes, how many
 * recipients), which of the common fields it lacks, and its body cut at white space as SpamBayes
 * reads it. Each took spam caught up on the SpamAssassin corpus with hard ham misfiled unchanged
 * (docs/PERFORMANCE.md, "Spam filter").
 */

/** A header's first value as text (stored header maps hold strings or lists of them; anything else is read as text). */
export const first = (v: unknown): string => String((Array.isArray(v) ? v[0] : v) ?? '');

/** A string's shape: runs of digits as 9, of letters as a, anything else kept (bulk mailers stamp their own). */
const shape = (s: string): string => s.slice(0, 400).replace(/[0-9]+/g, '9').replace(/[a-z]+/gi, 'a').slice(0, 40);
/** A count as a coarse bucket: 1, 2, 3, then 4-7, 8-15, 16 and more. */
const bucket = (n: number): number => (n < 4 ? n : n < 8 ? 4 : n < 16 ? 8 : 16);

/**
 * The shapes of the header fields. "noheader:" only for a message that has a header map at all:
 * mail posted to the HTTP API may come without one, and that says nothing of its sender.
 */
export function headerShapes(h: Record<string, string | string[]>): string[] {
  const out: string[] = [];
  if (Object.keys(h).length > 0) for (const name of ['date', 'message-id', 'to']) if (h[name] === undefined) out.push(`noheader:${name}`);
  const cte = first(h['content-transfer-encoding']).trim().toLowerCase().slice(0, 40);
  if (cte) out.push(`cte:${cte}`);
  const boundary = /boundary="?([^";\s]+)/i.exec(first(h['content-type']))?.[1];
  if (boundary) out.push(`ctb:${shape(boundary)}`);
  const mid = first(h['message-id']);
  const at = mid.lastIndexOf('@');
  if (at > 0) out.push(`midl:${shape(mid.slice(0, at).replace(/^\s*</, ''))}`);
  const date = first(h.date).slice(0, 200);
  if (date) {
    out.push(`date:${shape(date.replace(/\([^)]*\)/g, '').trim())}`);
    if (!/^[A-Z][a-z]{2}, /.test(date)) out.push('date:no-weekday');
  }
  const to = first(h.to);
  if (to) out.push(`to:count${bucket(to.split(',').length)}`);
  if (h.cc !== undefined) out.push(`cc:count${bucket(first(h.cc).split(',').length)}`);
  return out;
}

const CHUNK = /\S+/g;
const LEADING = /^[^\p{L}\p{N}$€£]+/u;
const TRAILING = /[.,;:'")\]]+$/;
const NOT_WORD = /[^\p{L}\p{N}]+/u;
const EMAIL_DOMAIN = /[a-z0-9._%+-]+@([a-z0-9-]+(?:\.[a-z0-9-]+)+)/g;
const PROTO = /\b(https?|ftp|mailto):/gi;
const URL_ODD_HOST = /\bhttps?:\/\/(?:\d+\.\d+\.\d+\.\d+|[^\s/"'>]*@)/i;

/**
 * Body words as SpamBayes reads them: cut at white space, punctuation trimmed from the ends (but
 * "!" and "?") and kept inside ("$99.99", "free!!" as they stand), shorter than 3 left out, numbers folded to their
 * length, and a word longer than 12 as "skip:" its first character and length to the ten (encoded
 * junk and long ids), plus the pieces of one that is a link or an address. At most `limit` words
 * (and twice that in all).
 */
export function bodyWords(text: string, limit: number): string[] {
  const out: string[] = [];
  let words = 0;
  for (const m of text.matchAll(CHUNK)) {
    const w = m[0].toLowerCase().replace(LEADING, '').replace(TRAILING, '');
    if (w.length < 3) continue;
    if (w.length <= 12) {
      out.push(/^\d+$/.test(w) ? `num:${w.length}` : w);
      words++;
    } else {
      out.push(`skip:${w[0]}${Math.min(Math.floor(w.length / 10) * 10, 200)}`);
      if (/[./@]/.test(w)) for (const p of w.slice(0, 200).split(NOT_WORD)) if (p.length >= 3 && p.length <= 12) out.push(p);
    }
    if (words >= limit || out.length >= 2 * limit) break;
  }
  return out;
}

/** Where the body's links and addresses point: the domains of addresses, link protocols, links to a bare IP or with a user part. */
export function linkShapes(text: string, html: string): string[] {
  const out: string[] = [];
  for (const a of text.slice(0, 30_000).toLowerCase().matchAll(EMAIL_DOMAIN)) out.push(`email:${a[1]}`);
  for (const source of [text, html]) {
    for (const p of source.matchAll(PROTO)) out.push(`proto:${p[1].toLowerCase()}`);
    if (URL_ODD_HOST.test(source)) out.push('url:ip-or-userinfo');
  }
  return out;
}
