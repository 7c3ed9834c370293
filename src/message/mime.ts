/*
 * A MIME tree of a raw message with byte offsets (RFC 2045/2046), for FETCH's BODY[section],
 * BODYSTRUCTURE and BINARY: every part knows where its header and body lie in the original bytes,
 * so a section is a slice of the stored message and never a re-encoding of it. Tolerant like mail
 * readers are: bare LF line ends, a missing closing boundary, and a header with no body all parse.
 */

/** A part: its header and body ranges in the message bytes, its type, and its children. */
export interface MimePart {
  headerStart: number;
  /** End of the header including the empty line that ends it. */
  headerEnd: number;
  bodyStart: number;
  bodyEnd: number;
  /** Header fields in order: lower-case name, unfolded value. */
  fields: Array<[string, string]>;
  type: string;
  subtype: string;
  params: Array<[string, string]>;
  /** Parts of a multipart. */
  children?: MimePart[];
  /** The message inside a message/rfc822 part. */
  message?: MimePart;
}

const MAX_DEPTH = 30;
const MAX_PARTS = 2000;

/** Where the header that starts at `start` ends (after its empty line), and the body start. */
function headerEnd(buf: Buffer, start: number, end: number): number {
  let i = start;
  for (;;) {
    if (i >= end) return end;
    if (buf[i] === 0x0a) return i + 1;
    if (buf[i] === 0x0d && buf[i + 1] === 0x0a) return i + 2;
    const nl = buf.indexOf(0x0a, i);
    if (nl < 0 || nl >= end) return end;
    i = nl + 1;
  }
}

/** Header fields of a header block, unfolded. */
export function parseFields(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const line of text.split(/\r?\n/)) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && out.length) {
      out[out.length - 1][1] += ' ' + line.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    out.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return out;
}

/** `type/subtype; a=b; c="d"` split into its value and parameters (parameter names lower-cased). */
export function parseParams(value: string): { value: string; params: Array<[string, string]> } {
  const pieces: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of value) {
    if (ch === '"') quoted = !quoted;
    if (ch === ';' && !quoted) { pieces.push(cur); cur = ''; continue; }
    cur += ch;
  }
  pieces.push(cur);
  const params: Array<[string, string]> = [];
  for (const p of pieces.slice(1)) {
    const eq = p.indexOf('=');
    if (eq <= 0) continue;
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    params.push([p.slice(0, eq).trim().toLowerCase(), v]);
  }
  return { value: pieces[0].trim(), params };
}

export const field = (p: MimePart, name: string): string | undefined => p.fields.find(([n]) => n === name)?.[1];
export const param = (p: MimePart, name: string): string | undefined => p.params.find(([n]) => n === name)?.[1];

/** Parses the part in [start, end); `digest` makes message/rfc822 the default type. */
function parsePart(buf: Buffer, start: number, end: number, depth: number, count: { n: number }, digest = false): MimePart {
  count.n++;
  const hEnd = headerEnd(buf, start, end);
  const fields = parseFields(buf.toString('utf8', start, hEnd));
  const ct = fields.find(([n]) => n === 'content-type')?.[1];
  const parsed = ct ? parseParams(ct) : { value: digest ? 'message/rfc822' : 'text/plain', params: digest ? [] : [['charset', 'us-ascii'] as [string, string]] };
  let [type, subtype] = parsed.value.toLowerCase().split('/');
  if (!type || !subtype) { type = 'text'; subtype = 'plain'; }
  const part: MimePart = { headerStart: start, headerEnd: hEnd, bodyStart: hEnd, bodyEnd: end, fields, type, subtype, params: parsed.params };
  if (depth >= MAX_DEPTH || count.n > MAX_PARTS) return part;
  const boundary = part.params.find(([n]) => n === 'boundary')?.[1];
  if (type === 'multipart' && boundary) {
    part.children = splitMultipart(buf, hEnd, end, boundary).map(([s, e]) => parsePart(buf, s, e, depth + 1, count, subtype === 'digest'));
  } else if (type === 'message' && (subtype === 'rfc822' || subtype === 'global')) {
    part.message = parsePart(buf, hEnd, end, depth + 1, count);
  }
  return part;
}

/** The [start, end) ranges of the parts between boundary lines. */
function splitMultipart(buf: Buffer, start: number, end: number, boundary: string): Array<[number, number]> {
  const delim = Buffer.from('--' + boundary, 'latin1');
  const ranges: Array<[number, number]> = [];
  let partStart = -1;
  let lineStart = start;
  while (lineStart < end) {
    let nl = buf.indexOf(0x0a, lineStart);
    if (nl < 0 || nl >= end) nl = end;
    // Most lines do not start with "--": compared only when they do (no slice per body line).
    const isDelim = buf[lineStart] === 0x2d && buf[lineStart + 1] === 0x2d && lineStart + delim.length <= end
      && buf.compare(delim, 0, delim.length, lineStart, lineStart + delim.length) === 0;
    if (isDelim) {
      // The line break before a boundary belongs to the boundary, not to the part.
      if (partStart >= 0) {
        let e = lineStart;
        if (e > partStart && buf[e - 1] === 0x0a) e--;
        if (e > partStart && buf[e - 1] === 0x0d) e--;
        ranges.push([partStart, e]);
      }
      const closing = buf[lineStart + delim.length] === 0x2d && buf[lineStart + delim.length + 1] === 0x2d;
      if (closing) return ranges;
      partStart = Math.min(nl + 1, end);
    }
    lineStart = nl + 1;
  }
  if (partStart >= 0) ranges.push([partStart, end]);
  return ranges;
}

/** The MIME tree of a whole message. */
export const parseMime = (raw: Buffer): MimePart => parsePart(raw, 0, raw.length, 0, { n: 0 });

/**
 * The part a section's part numbers name (RFC 3501/9051 6.4.5): each number counts the parts of a
 * message, and a message that is not multipart has one part, its body (so part 1 of a message whose
 * type is message/rfc822 is the whole embedded message). After a message/rfc822 part the numbers go
 * on counting the parts of the message inside it; after a multipart, its children; a leaf has none.
 */
export function partAt(root: MimePart, path: number[]): MimePart | undefined {
  let message: MimePart | undefined = root;
  let part: MimePart | undefined;
  for (const n of path) {
    if (!message) return undefined;
    part = message.children ? message.children[n - 1] : n === 1 ? message : undefined;
    if (!part) return undefined;
    message = part.children ? part : part.message;
  }
  return part;
}

/** Lines of a body (for text and message/rfc822 parts). */
export function countLines(buf: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = buf.indexOf(0x0a, start); i >= 0 && i < end; i = buf.indexOf(0x0a, i + 1)) n++;
  if (end > start && buf[end - 1] !== 0x0a) n++;
  return n;
}

/** A part's body decoded from its Content-Transfer-Encoding (BINARY[]); null for an unknown encoding. */
export function decodedBody(raw: Buffer, p: MimePart): Buffer | null {
  const body = raw.subarray(p.bodyStart, p.bodyEnd);
  const cte = (field(p, 'content-transfer-encoding') ?? '7bit').toLowerCase();
  if (cte === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (cte === 'quoted-printable') return decodeQp(body);
  if (cte === '7bit' || cte === '8bit' || cte === 'binary') return body;
  return null;
}

/**
 * Quoted-printable (RFC 2045 6.7): whitespace at the end of a line is transport padding and goes;
 * a line that then ends in "=" is a soft line break (joined to the next).
 */
function decodeQp(body: Buffer): Buffer {
  const s = body.toString('latin1').replace(/[ \t]+(?=\r?\n|$)/g, '').replace(/=\r?\n/g, '').replace(/=$/, '');
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3d && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) { out.push(parseInt(s.slice(i + 1, i + 3), 16)); i += 2; } else out.push(c);
  }
  return Buffer.from(out);
}
