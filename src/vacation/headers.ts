/** The header section of a message (up to the first empty line), unfolded, by lower-case name. */
export function headerFields(raw: Buffer): Map<string, string[]> {
  let end = raw.indexOf('\r\n\r\n');
  if (end < 0) end = raw.indexOf('\n\n');
  const text = raw.subarray(0, end < 0 ? Math.min(raw.length, 256 * 1024) : end).toString('utf8');
  const fields = new Map<string, string[]>();
  for (const line of text.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const list = fields.get(name) ?? [];
    list.push(line.slice(colon + 1).trim());
    fields.set(name, list);
  }
  return fields;
}

/** The addresses written in header values (To, Cc), lower-cased. */
export function addressesIn(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) for (const m of v.matchAll(/[^\s<>,;:"()[\]]+@[^\s<>,;:"()[\]]+/g)) out.push(m[0].toLowerCase());
  return out;
}

/** A header value as RFC 2047 encoded-words when it is not plain ASCII. */
export function encodeHeaderValue(text: string): string {
  const clean = text.replace(/[\r\n]+/g, ' ');
  // eslint-disable-next-line no-control-regex
  if (/^[\x20-\x7e]*$/.test(clean)) return clean;
  const words: string[] = [];
  let chunk = '';
  for (const ch of clean) {
    if (Buffer.byteLength(chunk + ch) > 45) { words.push(chunk); chunk = ''; }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join('\r\n ');
}

/** Base64 body lines of 76 characters. */
export function base64Body(text: string): string {
  return (Buffer.from(text, 'utf8').toString('base64').match(/.{1,76}/g) ?? []).join('\r\n');
}
