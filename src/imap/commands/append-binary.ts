import { parseMime, type MimePart } from '../../message/mime.js';

/** Leaf parts (no children, no message inside) whose body holds a NUL byte. */
function nulLeaves(p: MimePart, raw: Buffer, out: MimePart[]): MimePart[] {
  if (p.children) for (const c of p.children) nulLeaves(c, raw, out);
  else if (p.message) nulLeaves(p.message, raw, out);
  else if (raw.subarray(p.bodyStart, p.bodyEnd).includes(0)) out.push(p);
  return out;
}

/** Base64 in lines of 76 (RFC 2045 6.8). */
const base64Lines = (b: Buffer) => (b.toString('base64').match(/.{1,76}/g) ?? []).join('\r\n') + '\r\n';

/**
 * A message APPENDed as a literal8 (RFC 3516) with NUL bytes in a part, as it is stored: each such
 * part base64-encoded (its Content-Transfer-Encoding says so), as Dovecot does, so every section
 * can be sent in a plain literal and BINARY[part] still gives the bytes the client sent. A message
 * without NUL is stored as given.
 */
export function encodeNulParts(raw: Buffer): Buffer {
  if (!raw.includes(0)) return raw;
  const leaves = nulLeaves(parseMime(raw), raw, []).sort((a, b) => b.headerStart - a.headerStart);
  let out = raw;
  for (const leaf of leaves) {
    let header = raw.toString('latin1', leaf.headerStart, leaf.headerEnd);
    const cte = /^content-transfer-encoding:[^\r\n]*(\r?\n[ \t][^\r\n]*)*/im;
    if (cte.test(header)) header = header.replace(cte, 'Content-Transfer-Encoding: base64');
    else header = header.replace(/(\r?\n)$/, 'Content-Transfer-Encoding: base64\r\n$1'); // before the empty line
    out = Buffer.concat([out.subarray(0, leaf.headerStart), Buffer.from(header, 'latin1'), Buffer.from(base64Lines(raw.subarray(leaf.bodyStart, leaf.bodyEnd))), out.subarray(leaf.bodyEnd)]);
  }
  return out;
}
