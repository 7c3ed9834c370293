import { isUtf8 } from 'node:buffer';

/** The largest header block we look at (mailparser's own limit is the same). */
export const MAX_HEAD_BYTES = 1024 * 1024;
/** Header values longer than this are cut in the stored `headers` object. */
const MAX_HEADER_VALUE = 64 * 1024;

/**
 * Text of 8-bit bytes whose charset nobody declared: UTF-8 when they are valid UTF-8 (what
 * SMTPUTF8 and most modern senders use), else Windows-1252 (the usual legacy charset, a superset
 * of printable Latin-1).
 */
export function decodeUndeclared(bytes: Buffer): string {
  return isUtf8(bytes) ? bytes.toString('utf8') : new TextDecoder('windows-1252').decode(bytes);
}

/** Decodes bytes in a declared charset, falling back to `decodeUndeclared` for unknown charsets. */
export function decodeCharset(bytes: Buffer, charset: string): string {
  const label = charset.replace(/\*.*$/, '').trim().toLowerCase();
  try {
    return new TextDecoder(label || 'utf-8').decode(bytes);
  } catch {
    return decodeUndeclared(bytes);
  }
}

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

function wordBytes(encoding: string, text: string): Buffer {
  if (encoding === 'B' || encoding === 'b') return Buffer.from(text, 'base64');
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '_') bytes.push(0x20);
    else if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes);
}

/**
 * Decodes RFC 2047 encoded words. Whitespace between adjacent encoded words is dropped, and the
 * bytes of adjacent words in the same charset are joined before decoding, so a multi-byte
 * character split across two words survives. Unknown charsets degrade, never throw.
 */
export function decodeWords(value: string): string {
  if (!value.includes('=?')) return value;
  let out = '';
  let last = 0;
  const run: { charset: string; bytes: Buffer[] } = { charset: '', bytes: [] };
  const flush = () => {
    if (run.bytes.length > 0) out += decodeCharset(Buffer.concat(run.bytes), run.charset);
    run.bytes = [];
  };
  for (const m of value.matchAll(ENCODED_WORD)) {
    const between = value.slice(last, m.index);
    const adjacent = run.bytes.length > 0 && /^[ \t\r\n]*$/.test(between);
    const charset = m[1].toLowerCase();
    if (!adjacent || run.charset !== charset) flush();
    if (!adjacent) out += between;
    run.charset = charset;
    run.bytes.push(wordBytes(m[2], m[3]));
    last = m.index + m[0].length;
  }
  flush();
  return out + value.slice(last);
}

/** Removes the line breaks of a folded header value (RFC 5322 section 2.2.3). */
export const unfold = (value: string) => value.replace(/\r?\n(?=[ \t])/g, '');

/** Where the header block of a message ends: the index of the body's first byte, and the separator length. */
export function headerEnd(raw: Buffer): { bodyStart: number; headEnd: number } | null {
  const limit = Math.min(raw.length, MAX_HEAD_BYTES);
  for (let i = 0; i < limit; i++) {
    if (raw[i] !== 0x0a) continue;
    if (raw[i + 1] === 0x0a) return { headEnd: i + 1, bodyStart: i + 2 };
    if (raw[i + 1] === 0x0d && raw[i + 2] === 0x0a) return { headEnd: i + 1, bodyStart: i + 3 };
  }
  return null;
}

/**
 * Re-encodes the top header block to UTF-8 line by line where a line carries 8-bit bytes that are
 * not UTF-8 (raw Latin-1 headers are common in old mailers). mailparser reads 8-bit headers as
 * UTF-8, so this is what lets it decode them instead of producing replacement characters. The
 * stored raw message is never changed; this is only the copy that gets parsed.
 */
export function fixHeaderBlock(head: Buffer): Buffer {
  let ascii = true;
  for (const byte of head) if (byte > 0x7f) { ascii = false; break; }
  if (ascii || isUtf8(head)) return head;
  const parts: Buffer[] = [];
  let start = 0;
  while (start < head.length) {
    let end = head.indexOf(0x0a, start);
    end = end === -1 ? head.length : end + 1;
    const line = head.subarray(start, end);
    parts.push(isUtf8(line) ? line : Buffer.from(decodeUndeclared(line), 'utf8'));
    start = end;
  }
  return Buffer.concat(parts);
}

/** One raw header line as mailparser reports it: lower-case key and the whole line as a binary string. */
export interface HeaderLine {
  key: string;
  line: string;
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The `headers` object of an email: lower-case names, values unfolded, 8-bit bytes and RFC 2047
 * words decoded; a header that occurs more than once becomes an array in message order.
 */
export function headersObject(lines: readonly HeaderLine[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const { key, line } of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const rawValue = unfold(line.slice(colon + 1)).trim();
    // Most values are ASCII, which every decoding leaves as it is.
    const text = ASCII.test(rawValue) ? rawValue : decodeUndeclared(Buffer.from(rawValue, 'latin1'));
    let value = decodeWords(text);
    if (value.length > MAX_HEADER_VALUE) value = value.slice(0, MAX_HEADER_VALUE);
    const name = key.toLowerCase();
    const prev = out[name];
    if (prev === undefined) out[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[name] = [prev, value];
  }
  return { ...out };
}

/**
 * Splits a header block into lines the way `headersObject` takes them, for messages mailparser
 * could not read. Lines that are neither a header nor a continuation end the block.
 */
export function splitHeaderBlock(head: Buffer): { lines: HeaderLine[]; consumed: number } {
  const lines: HeaderLine[] = [];
  let start = 0;
  while (start < head.length) {
    let end = head.indexOf(0x0a, start);
    end = end === -1 ? head.length : end + 1;
    const text = head.subarray(start, end).toString('latin1');
    if (/^[ \t]/.test(text) && lines.length > 0) {
      lines[lines.length - 1].line += text.replace(/\r?\n$/, '');
    } else {
      const m = /^([\x21-\x39\x3b-\x7e]+)[ \t]*:/.exec(text);
      if (!m) break;
      lines.push({ key: m[1].toLowerCase(), line: text.replace(/\r?\n$/, '') });
    }
    start = end;
  }
  // Continuation lines were appended without their line break; unfold works on either form.
  return { lines, consumed: start };
}
