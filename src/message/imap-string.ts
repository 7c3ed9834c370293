/*
 * IMAP strings (RFC 9051 section 4.3) as the message library writes them into ENVELOPE and
 * BODYSTRUCTURE: quoted when short, 7-bit and free of CR, LF and NUL, else literals, so any value
 * (a subject with a newline, UTF-8 text) reaches the client intact.
 */

const QUOTABLE = /^[\x01-\x09\x0b\x0c\x0e-\x7f]{0,1000}$/;

/**
 * A string as a quoted string or a literal. A literal may not hold NUL (RFC 9051 CHAR8), nor
 * PostgreSQL a text value (kept summaries, summary.ts): NUL goes out as U+FFFD.
 */
export function str(s: string): string {
  if (QUOTABLE.test(s)) return `"${s.replace(/[\\"]/g, (c) => '\\' + c)}"`;
  const text = s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s;
  return `{${Buffer.byteLength(text)}}\r\n${text}`;
}

/** A string or NIL. */
export const nstr = (s: string | null | undefined): string => (s === null || s === undefined ? 'NIL' : str(s));
