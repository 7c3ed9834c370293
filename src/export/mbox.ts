const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A time as asctime(3) in UTC, as mbox `From ` lines carry it: `Mon Jan  1 12:00:00 2024`. */
export function asctime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} ${d.getUTCFullYear()}`;
}

/** Whether the line starting at `i` is `From ` behind any number of `>` (mboxrd escapes those). */
function needsEscape(raw: Buffer, i: number): boolean {
  let j = i;
  while (j < raw.length && raw[j] === 0x3e) j++;
  return raw[j] === 0x46 && raw[j + 1] === 0x72 && raw[j + 2] === 0x6f && raw[j + 3] === 0x6d && raw[j + 4] === 0x20;
}

/**
 * One message as an mboxrd entry: a `From ` line with the received date, the bytes with every
 * `>*From ` line given one more `>`, a newline if the bytes lack a last one, and the empty line
 * that ends an entry. Line ends inside the message are kept as stored.
 */
export function mboxEntry(raw: Buffer, receivedAt: number): Buffer {
  const parts: Buffer[] = [Buffer.from(`From MAILER-DAEMON ${asctime(receivedAt)}\n`)];
  let start = 0;
  for (let i = 0; i < raw.length; i = raw.indexOf(0x0a, i) + 1 || raw.length) {
    if (needsEscape(raw, i)) {
      parts.push(raw.subarray(start, i), Buffer.from('>'));
      start = i;
    }
  }
  parts.push(raw.subarray(start));
  parts.push(Buffer.from(raw.length > 0 && raw[raw.length - 1] === 0x0a ? '\n' : '\n\n'));
  return Buffer.concat(parts);
}
