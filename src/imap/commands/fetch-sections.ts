import { decodedBody, partAt, type MimePart } from '../../message/mime.js';
import type { Parser } from '../protocol/parser.js';
import { ImapNo } from '../protocol/session.js';

/** A BODY[...] / BINARY[...] section (RFC 9051 6.4.5): part numbers, then what of that part. */
export interface Section {
  path: number[];
  text: '' | 'HEADER' | 'HEADER.FIELDS' | 'HEADER.FIELDS.NOT' | 'TEXT' | 'MIME';
  fields: string[];
}

/** Reads `[...]` after BODY / BODY.PEEK / BINARY. */
export function readSection(p: Parser, binary: boolean): Section {
  p.expect('[');
  const path: number[] = [];
  let text: Section['text'] = '';
  let fields: string[] = [];
  while (!p.take(']')) {
    const c = p.peek();
    if (c >= 0x30 && c <= 0x39) {
      path.push(p.nzNumber());
      if (p.take('.')) continue;
      p.expect(']');
      break;
    }
    if (binary) p.fail('part number');
    const w = p.word();
    if (w === 'HEADER.FIELDS' || w === 'HEADER.FIELDS.NOT') {
      p.sp();
      fields = p.list(() => p.astring().toLowerCase(), false);
    } else if (!['HEADER', 'TEXT', 'MIME'].includes(w) || (w === 'MIME' && path.length === 0)) p.fail('section text');
    text = w as Section['text'];
    p.expect(']');
    break;
  }
  return { path, text, fields };
}

/** The section as the response names it. */
export function sectionName(s: Section): string {
  const parts = [s.path.join('.'), s.text].filter(Boolean).join('.');
  return s.fields.length ? `${parts} (${s.fields.map((f) => f.toUpperCase()).join(' ')})` : parts;
}

/** Header field blocks of a header range, raw (continuation lines kept), with lower-case names. */
function rawFields(raw: Buffer, start: number, end: number): Array<[string, Buffer]> {
  const out: Array<[string, Buffer]> = [];
  let i = start;
  while (i < end) {
    let j = raw.indexOf(0x0a, i);
    j = j < 0 || j >= end ? end : j + 1;
    const line = raw.subarray(i, j);
    if (line[0] === 0x20 || line[0] === 0x09) {
      if (out.length) out[out.length - 1][1] = Buffer.concat([out[out.length - 1][1], line]);
    } else if (line.length > 2 || (line[0] !== 0x0d && line[0] !== 0x0a)) {
      const colon = line.indexOf(0x3a);
      if (colon > 0) out.push([line.toString('latin1', 0, colon).trim().toLowerCase(), line]);
    }
    i = j;
  }
  return out;
}

/** The bytes a section names (an empty buffer for a part that does not exist). */
export function sectionBytes(raw: Buffer, root: MimePart, s: Section): Buffer {
  const part = s.path.length === 0 ? root : partAt(root, s.path);
  if (!part) return Buffer.alloc(0);
  if (s.text === 'MIME') return raw.subarray(part.headerStart, part.headerEnd);
  if (s.text === '') return s.path.length === 0 ? raw : raw.subarray(part.bodyStart, part.bodyEnd);
  // HEADER and TEXT of a part path are those of the message inside a message/rfc822 part.
  const msg = s.path.length === 0 ? part : part.message;
  if (!msg) return Buffer.alloc(0);
  if (s.text === 'TEXT') return raw.subarray(msg.bodyStart, msg.bodyEnd);
  if (s.text === 'HEADER') return raw.subarray(msg.headerStart, msg.headerEnd);
  const want = new Set(s.fields);
  const not = s.text === 'HEADER.FIELDS.NOT';
  const picked = rawFields(raw, msg.headerStart, msg.headerEnd).filter(([n]) => want.has(n) !== not).map(([, b]) => b);
  return Buffer.concat([...picked, Buffer.from('\r\n')]);
}

/** BINARY[section]: the part's body decoded; NO [UNKNOWN-CTE] when its encoding is unknown. */
export function binaryBytes(raw: Buffer, root: MimePart, path: number[]): Buffer {
  if (path.length === 0) return raw;
  const part = partAt(root, path);
  if (!part) return Buffer.alloc(0);
  if (part.children) throw new ImapNo('a multipart has no single body to decode', 'UNKNOWN-CTE');
  const out = decodedBody(raw, part);
  if (!out) throw new ImapNo('unknown content transfer encoding', 'UNKNOWN-CTE');
  return out;
}
