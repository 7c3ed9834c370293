/**
 * Features of a message's form rather than its words, after SpamBayes' tokenizer (issue 43): how
 * its header fields are spelled (encoding, MIME boundary, Message-ID and Date shapes, how many
 * recipients), which of the common fields it lacks, and its body cut at white space as SpamBayes
 * reads it. Each took spam caught up on the SpamAssassin corpus with hard ham misfiled unchanged
 * (docs/PERFORMANCE.md, "Spam filter").
 */

/** Receives each feature as a prefix and a text: the feature is their concatenation (hashed in place, tokens.ts). */
export type FeatureSink = (prefix: string, text: string) => void;
/**
 * Receives a body word without making a string of it: the characters from `start` to `end` of an
 * ASCII text, read in lower case, are the feature (no prefix).
 */
export type WordSink = (text: string, start: number, end: number) => void;

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
export function headerShapes(h: Record<string, string | string[]>, add: FeatureSink): void {
  if (Object.keys(h).length > 0) for (const name of ['date', 'message-id', 'to']) if (h[name] === undefined) add('noheader:', name);
  const cte = first(h['content-transfer-encoding']).trim().toLowerCase().slice(0, 40);
  if (cte) add('cte:', cte);
  const boundary = /boundary="?([^";\s]+)/i.exec(first(h['content-type']))?.[1];
  if (boundary) add('ctb:', shape(boundary));
  const mid = first(h['message-id']);
  const at = mid.lastIndexOf('@');
  if (at > 0) add('midl:', shape(mid.slice(0, at).replace(/^\s*</, '')));
  const date = first(h.date).slice(0, 200);
  if (date) {
    add('date:', shape(date.replace(/\([^)]*\)/g, '').trim()));
    if (!/^[A-Z][a-z]{2}, /.test(date)) add('date:', 'no-weekday');
  }
  const to = first(h.to);
  if (to) add('to:count', String(bucket(to.split(',').length)));
  if (h.cc !== undefined) add('cc:count', String(bucket(first(h.cc).split(',').length)));
}

const LEADING = /^[^\p{L}\p{N}$€£]+/u;
const TRAILING = /[.,;:'")\]]+$/;
const NOT_WORD = /[^\p{L}\p{N}]+/u;
/** An address's domain, read from just after its "@" (sticky: tried only where an "@" was found). */
const DOMAIN_AT = /[a-z0-9-]+(?:\.[a-z0-9-]+)+/y;
/** A link protocol's name, read back from the ":" that ends it. */
const PROTOCOLS = ['https', 'http', 'ftp', 'mailto'];
const URL_ODD_HOST = /\bhttps?:\/\/(?:\d+\.\d+\.\d+\.\d+|[^\s/"'>]*@)/i;

/** White space as `\s` has it, by UTF-16 code unit. */
function isSpace(c: number): boolean {
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}
/** ASCII letters, digits and `$`: a word may start with them (anything else goes to LEADING's test). */
const isPlainStart = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 36;
/** What TRAILING trims: . , ; : ' " ) ] */
const isTrailing = (c: number): boolean => c === 46 || c === 44 || c === 59 || c === 58 || c === 39 || c === 34 || c === 41 || c === 93;
const isDigits = (w: string): boolean => isDigitRange(w, 0, w.length);
function isDigitRange(w: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) { const c = w.charCodeAt(i); if (c < 48 || c > 57) return false; }
  return true;
}
/** What LEADING keeps at the start of an ASCII word: letters of either case, digits and `$`. */
const isAsciiWordStart = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 36;

/**
 * Body words as SpamBayes reads them: cut at white space, punctuation trimmed from the ends (but
 * "!" and "?") and kept inside ("$99.99", "free!!" as they stand), shorter than 3 left out, numbers folded to their
 * length, and a word longer than 12 as "skip:" its first character and length to the ten (encoded
 * junk and long ids), plus the pieces of one that is a link or an address. At most `limit` words
 * (and twice that in all). The text is scanned by hand: the regular expressions run only on the
 * few words that start with punctuation or end with it (this runs for every delivered message).
 */
export function bodyWords(text: string, limit: number, add: FeatureSink, addWord: WordSink = (t, a, b) => add('', t.slice(a, b).toLowerCase())): void {
  let words = 0;
  let out = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n) break;
    const start = i;
    let ascii = true;
    for (let c = text.charCodeAt(i); i < n && !isSpace(c); c = text.charCodeAt(++i)) if (c >= 128) ascii = false;
    if (ascii) {
      // The common case, read in place: the same trimming and folding as below, no string made.
      let a = start;
      let b = i;
      while (a < b && !isAsciiWordStart(text.charCodeAt(a))) a++;
      while (b > a && isTrailing(text.charCodeAt(b - 1))) b--;
      const length = b - a;
      if (length < 3) continue;
      if (length <= 12) {
        if (isDigitRange(text, a, b)) add('num:', String(length)); else addWord(text, a, b);
        out++;
        words++;
        if (words >= limit || out >= 2 * limit) break;
        continue;
      }
    }
    let w = text.slice(start, i).toLowerCase();
    if (!isPlainStart(w.charCodeAt(0))) w = w.replace(LEADING, '');
    if (w.length > 0 && isTrailing(w.charCodeAt(w.length - 1))) w = w.replace(TRAILING, '');
    if (w.length < 3) continue;
    if (w.length <= 12) {
      if (isDigits(w)) add('num:', String(w.length)); else add('', w);
      out++;
      words++;
    } else {
      add('skip:', `${w[0]}${Math.min(Math.floor(w.length / 10) * 10, 200)}`);
      out++;
      if (/[./@]/.test(w)) for (const p of w.slice(0, 200).split(NOT_WORD)) if (p.length >= 3 && p.length <= 12) { add('', p); out++; }
    }
    if (words >= limit || out >= 2 * limit) break;
  }
}

/** What may end an address's local part: a-z 0-9 . _ % + - (the text is in lower case). */
const isLocalEnd = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
/** A `\w` character of a regular expression without the u flag. */
const isWordChar = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;

/**
 * The domains of the addresses in a text, as `[a-z0-9._%+-]+@(domain)` finds them one after another,
 * found from each "@" rather than by trying the pattern at every character.
 */
function addressDomains(text: string, add: FeatureSink): void {
  let end = 0;
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    // An "@" right after the previous address's domain has no local part of its own.
    if (at <= end || !isLocalEnd(text.charCodeAt(at - 1))) continue;
    DOMAIN_AT.lastIndex = at + 1;
    const m = DOMAIN_AT.exec(text);
    if (!m) continue;
    add('email:', m[0]);
    end = DOMAIN_AT.lastIndex;
  }
}

/** The link protocols named in a text, as `\b(https?|ftp|mailto):` (any case) finds them, read back from each ":". */
function protocols(text: string, add: FeatureSink): void {
  for (let colon = text.indexOf(':'); colon >= 0; colon = text.indexOf(':', colon + 1)) {
    for (const name of PROTOCOLS) {
      const start = colon - name.length;
      if (start < 0 || (start > 0 && isWordChar(text.charCodeAt(start - 1)))) continue;
      if (text.slice(start, colon).toLowerCase() === name) { add('proto:', name); break; }
    }
  }
}

/** Where the body's links and addresses point: the domains of addresses, link protocols, links to a bare IP or with a user part. */
export function linkShapes(text: string, html: string, add: FeatureSink): void {
  addressDomains(text.slice(0, 30_000).toLowerCase(), add);
  for (const source of [text, html]) {
    protocols(source, add);
    if (URL_ODD_HOST.test(source)) add('url:', 'ip-or-userinfo');
  }
}
