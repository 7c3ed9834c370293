// RFC 5228 2.4.2.4 "encoded-character": ${hex:..} and ${unicode:..} in strings, decoded at parse time.
// A malformed sequence is left as it stands (the RFC says it is not an encoding then).
import { SieveFault, type Position } from './ast.js';

const ENCODED = /\$\{(hex|unicode):([\t\r\n 0-9a-fA-F]*)\}/gi;

export function decodeEncodedCharacters(text: string, at: Position): string {
  if (!text.includes('${')) return text;
  return text.replace(ENCODED, (whole, kind: string, body: string) => {
    const words = body.trim().split(/[\t\r\n ]+/).filter((w) => w.length > 0);
    if (words.length === 0) return whole;
    if (kind.toLowerCase() === 'hex') {
      if (words.some((w) => w.length > 2)) return whole;
      return Buffer.from(words.map((w) => parseInt(w, 16))).toString('utf8');
    }
    let out = '';
    for (const w of words) {
      const cp = parseInt(w, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        throw new SieveFault(at.line, at.column, `invalid unicode character ${w} in encoded character`);
      }
      out += String.fromCodePoint(cp);
    }
    return out;
  });
}
