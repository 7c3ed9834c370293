// The body test's transforms (RFC 5173 5): :raw (undecoded body), :content (parts of given types,
// decoded), :text (the text parts, decoded; HTML reduced to its text).
import { decodedText, type MimePart, type SieveMessage } from './message.js';

function leaves(part: MimePart, out: MimePart[]): MimePart[] {
  if (part.children.length === 0) out.push(part);
  for (const child of part.children) leaves(child, out);
  return out;
}

function all(part: MimePart, out: MimePart[]): MimePart[] {
  out.push(part);
  for (const child of part.children) all(child, out);
  return out;
}

function typeMatches(contentType: string, wanted: string): boolean {
  const w = wanted.toLowerCase();
  if (w === '') return true;
  // "type/subtype" or "type"; anything else ("text/plain/stupid", "/plain") names no part.
  if (!/^[^/\s]+(\/[^/\s]+)?$/.test(w)) return false;
  return w.includes('/') ? contentType === w : contentType.split('/')[0] === w;
}

const htmlToText = (html: string): string => html.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ')
  .replace(/&nbsp;/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim();
const isHtml = (type: string): boolean => type === 'text/html' || type === 'application/xhtml+xml';

export function bodyValues(message: SieveMessage, mode: 'raw' | 'content' | 'text', types: string[]): string[] {
  const key = `${mode}\0${types.join('\0')}`;
  let values = message.bodyCache.get(key);
  if (!values) {
    values = computeBodyValues(message, mode, types);
    message.bodyCache.set(key, values);
  }
  return values;
}

function computeBodyValues(message: SieveMessage, mode: 'raw' | 'content' | 'text', types: string[]): string[] {
  // A message without a body has nothing for the body test to match, not even "".
  if (message.bodyRaw.length === 0) return [];
  if (mode === 'raw') return [message.bodyRaw.toString('utf8')];
  const root = message.mime();
  if (mode === 'text') {
    return leaves(root, []).filter((p) => p.contentType.startsWith('text/') || isHtml(p.contentType))
      .map((p) => (isHtml(p.contentType) ? htmlToText(decodedText(p)) : decodedText(p)));
  }
  const out: string[] = [];
  for (const part of all(root, [])) {
    if (!types.some((t) => typeMatches(part.contentType, t))) continue;
    if (part.contentType.startsWith('multipart/')) out.push(part.prologue?.toString('utf8') ?? '', part.epilogue?.toString('utf8') ?? '');
    else if (part.contentType === 'message/rfc822') out.push(part.children[0]?.headerRaw?.toString('utf8') ?? '');
    else out.push(decodedText(part));
  }
  return out;
}
