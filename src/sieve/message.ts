// A small, synchronous reader of the delivered message: header fields (unfolded, RFC 2047 decoded), the raw
// body and MIME parts for the body test. Lighter than mailparser, which is asynchronous and parses everything.

export interface HeaderField { name: string; raw: string }
export interface MimePart {
  contentType: string; headers: HeaderField[]; body: Buffer; children: MimePart[];
  /** multipart: the text before the first and after the last boundary. */
  prologue?: Buffer; epilogue?: Buffer;
  /** The header block as written (message/rfc822 children: what body :content "message/rfc822" reads). */
  headerRaw?: Buffer;
}

const VALID_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

export class SieveMessage {
  readonly headers: HeaderField[];
  readonly bodyRaw: Buffer;
  private partsCache: MimePart | null = null;
  /** Decoded header values and body texts, computed once per message however many rules read them. */
  private readonly valueCache = new Map<string, string[]>();
  readonly bodyCache = new Map<string, string[]>();
  /** Parsed address lists per header field value (address parsing is the costly part of a run). */
  readonly addressCache = new Map<string, string[]>();

  /** `size`: the whole message's, when `raw` is only its header section. */
  constructor(readonly raw: Buffer, private readonly wholeSize?: number) {
    const split = splitHeader(raw);
    this.headers = split.headers;
    this.bodyRaw = split.body;
  }

  get size(): number { return this.wholeSize ?? this.raw.length; }

  /** Unfolded raw values of a header, in message order. */
  rawValues(name: string): string[] {
    if (!VALID_NAME.test(name)) return [];
    const lower = name.toLowerCase();
    return this.headers.filter((h) => h.name.toLowerCase() === lower).map((h) => h.raw);
  }

  /** Decoded values (RFC 2047), leading and trailing white space removed. */
  values(name: string): string[] {
    const key = name.toLowerCase();
    let values = this.valueCache.get(key);
    if (!values) {
      values = this.rawValues(name).map((v) => decodeWords(v).trim());
      this.valueCache.set(key, values);
    }
    return [...values];
  }

  has(name: string): boolean {
    if (!VALID_NAME.test(name)) return false;
    const lower = name.toLowerCase();
    return this.headers.some((h) => h.name.toLowerCase() === lower);
  }

  mime(): MimePart {
    if (!this.partsCache) this.partsCache = parsePart(this.headers, this.bodyRaw, 'text/plain', 0);
    return this.partsCache;
  }
}

function splitHeader(raw: Buffer): { headers: HeaderField[]; body: Buffer; headerRaw: Buffer } {
  let end = -1;
  let bodyStart = raw.length;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== 0x0a) continue;
    if (raw[i + 1] === 0x0a) { end = i + 1; bodyStart = i + 2; break; }
    if (raw[i + 1] === 0x0d && raw[i + 2] === 0x0a) { end = i + 1; bodyStart = i + 3; break; }
  }
  if (i0(raw)) { end = 0; bodyStart = raw[0] === 0x0d ? 2 : 1; }
  const headerRaw = raw.subarray(0, end < 0 ? raw.length : end);
  return { headers: parseHeaderLines(headerRaw.toString('utf8')), body: raw.subarray(Math.min(bodyStart, raw.length)), headerRaw };
}

/** A message that starts with an empty line has no header at all. */
function i0(raw: Buffer): boolean {
  return raw[0] === 0x0a || (raw[0] === 0x0d && raw[1] === 0x0a);
}

function parseHeaderLines(text: string): HeaderField[] {
  const out: HeaderField[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && out.length) {
      out[out.length - 1].raw += line;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trimEnd();
    if (!/^[\x21-\x39\x3b-\x7e]+$/.test(name)) continue;
    out.push({ name, raw: line.slice(colon + 1) });
  }
  return out;
}

const ENCODED_WORD = /=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g;

/** RFC 2047 encoded words; white space between two adjacent encoded words is dropped. */
export function decodeWords(value: string): string {
  if (!value.includes('=?')) return value;
  const joined = value.replace(/(=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)/g, '$1');
  return joined.replace(ENCODED_WORD, (whole, charset: string, enc: string, text: string) => {
    let bytes: Buffer;
    if (enc.toLowerCase() === 'b') bytes = Buffer.from(text, 'base64');
    else {
      bytes = Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1');
    }
    return decodeCharset(bytes, charset.replace(/\*.*$/, '')) ?? whole;
  });
}

export function decodeCharset(bytes: Buffer, charset: string): string | null {
  try {
    return new TextDecoder(charset.toLowerCase() === 'us-ascii' ? 'utf-8' : charset).decode(bytes);
  } catch {
    return null;
  }
}

/** Content-Type value parts: "type/subtype" lower-cased and parameters. */
export function parseContentType(value: string | undefined, fallback: string): { type: string; params: Record<string, string> } {
  if (!value) return { type: fallback, params: {} };
  const [head, ...rest] = value.split(';');
  const type = head.trim().toLowerCase() || fallback;
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"')) v = v.slice(1, v.lastIndexOf('"') > 0 ? v.lastIndexOf('"') : undefined).replace(/\\(.)/g, '$1');
    params[p.slice(0, eq).trim().toLowerCase()] = v;
  }
  // A malformed type ("text/plain/stupid") is no text: RFC 2045 5.2 says to treat it as unknown.
  const valid = /^[^/\s]+\/[^/\s]+$/.test(type);
  return { type: valid ? type : (type.includes('/') ? 'application/octet-stream' : fallback), params };
}

function headerValue(headers: HeaderField[], name: string): string | undefined {
  return headers.find((h) => h.name.toLowerCase() === name)?.raw.trim();
}

function parsePart(headers: HeaderField[], body: Buffer, fallback: string, depth: number, headerRaw?: Buffer): MimePart {
  const ct = parseContentType(headerValue(headers, 'content-type'), fallback);
  const part: MimePart = { contentType: ct.type, headers, body, children: [], headerRaw };
  if (depth > 20) return part;
  if (ct.type.startsWith('multipart/') && ct.params.boundary) {
    const childDefault = ct.type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
    const { prologue, epilogue, parts } = splitMultipart(body, ct.params.boundary);
    part.prologue = prologue;
    part.epilogue = epilogue;
    for (const p of parts) {
      const s = splitHeader(p);
      part.children.push(parsePart(s.headers, s.body, childDefault, depth + 1, s.headerRaw));
    }
  } else if (ct.type === 'message/rfc822') {
    const s = splitHeader(body);
    part.children.push(parsePart(s.headers, s.body, 'text/plain', depth + 1, s.headerRaw));
  }
  return part;
}

function splitMultipart(body: Buffer, boundary: string): { prologue: Buffer; epilogue: Buffer; parts: Buffer[] } {
  const text = body.toString('latin1');
  const lines = text.split(/(?<=\n)/);
  const delim = '--' + boundary;
  const parts: Buffer[] = [];
  let prologue = '';
  let epilogue = '';
  let closed = false;
  let current: string[] | null = null;
  for (const line of lines) {
    if (closed) { epilogue += line; continue; }
    const bare = line.replace(/\r?\n$/, '').trimEnd();
    if (bare === delim || bare === delim + '--') {
      if (current) parts.push(Buffer.from(current.join('').replace(/\r?\n$/, ''), 'latin1'));
      if (bare === delim + '--') { current = null; closed = true; continue; }
      current = [];
    } else if (current) current.push(line);
    else if (!parts.length) prologue += line;
  }
  if (current) parts.push(Buffer.from(current.join(''), 'latin1'));
  return { prologue: Buffer.from(prologue, 'latin1'), epilogue: Buffer.from(epilogue, 'latin1'), parts };
}

/** A part's content with its transfer encoding undone and its charset decoded (text parts). */
export function decodedText(part: MimePart): string {
  const cte = (headerValue(part.headers, 'content-transfer-encoding') ?? '').toLowerCase();
  // An encoding we cannot undo leaves nothing readable (RFC 2045 6.4: treat as application/octet-stream).
  if (!['', '7bit', '8bit', 'binary', 'base64', 'quoted-printable'].includes(cte)) return '';
  let bytes = part.body;
  if (cte === 'base64') bytes = Buffer.from(bytes.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  else if (cte === 'quoted-printable') {
    bytes = Buffer.from(bytes.toString('latin1').replace(/=\r?\n/g, '').replace(/=([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1');
  }
  const charset = parseContentType(headerValue(part.headers, 'content-type'), 'text/plain').params.charset ?? 'utf-8';
  return decodeCharset(bytes, charset) ?? bytes.toString('latin1');
}
