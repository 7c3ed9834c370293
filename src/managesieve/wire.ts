/** How ManageSieve answers are written (RFC 5804 section 4). */

/** A string as the client reads it: quoted when short and plain, else a literal. */
export function sieveString(text: string): string {
  if (text.length <= 1024 && !/[\r\n\0"\\]/.test(text)) return `"${text}"`;
  return `{${Buffer.byteLength(text, 'utf8')}}\r\n${text}`;
}

/** A response line: OK, NO or BYE with an optional response code and a human text. */
export function responseLine(kind: 'OK' | 'NO' | 'BYE', text: string, code?: string): string {
  return `${kind}${code ? ` (${code})` : ''} ${sieveString(text)}\r\n`;
}

/** Decodes command bytes as UTF-8, or null when they are not UTF-8. */
const decoder = new TextDecoder('utf-8', { fatal: true });
export function utf8(bytes: Buffer): string | null {
  try { return decoder.decode(bytes); } catch { return null; }
}
