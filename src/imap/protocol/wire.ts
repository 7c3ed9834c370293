import { str } from '../../message/imap-string.js';

/*
 * Encoding of response data (RFC 9051 section 4): strings go quoted when they are short, 7-bit and
 * free of CR, LF, NUL, else as literals, so any value (a subject with a newline, UTF-8 text) reaches
 * the client intact. A response is a list of pieces: text (written as UTF-8) and raw bytes.
 */

export type Piece = string | Buffer;

export { nstr, str } from '../../message/imap-string.js';

/** Bytes as a literal (`~{n}` binary literal when `binary`). */
export const lit = (b: Buffer, binary = false): Piece[] => [`${binary ? '~' : ''}{${b.length}}\r\n`, b];

/** An astring: the atom itself when it may stand bare, else a string. */
export function astr(s: string): string {
  return /^[^\x00-\x20\x7f-\uffff(){%*"\\\]]+$/.test(s) ? s : str(s);
}

/** IMAP date-time of a UTC instant: `"dd-Mon-yyyy hh:mm:ss +0000"`. */
export function dateTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()];
  return `"${p(d.getUTCDate())}-${mon}-${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000"`;
}
