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
 * them into U+FFFD. Raw message bytes are not text and are never changed.
 */
export function safeText(s: string): string {
  // The common case (no NUL, no surrogate) pays one scan and allocates nothing.
  return SUSPECT.test(s) ? s.replace(UNSTORABLE, REPLACEMENT) : s;
}

/**
 * Text from outside (a remote server's reply, a receiver's answer, an error message quoting input)
 * made storable (see safeText); `max` bounds the length kept.
 */
export function storableText(text: string, max = Infinity): string {
  return safeText(text.length > max ? text.slice(0, max) : text);
}
