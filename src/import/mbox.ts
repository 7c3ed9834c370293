import { ApiError } from '../errors.js';

/** One message read from an mbox file. */
export interface MboxMessage {
  raw: Buffer;
  /** From the `From ` line's date (else the Date header), in ms; 0 when neither gives one. */
  receivedAt: number;
  /** From the Status / X-Status headers mail readers write (R: \Seen, A: \Answered, F: \Flagged, D: \Deleted). */
  flags: string[];
}

/** A message larger than this is refused (the reader holds one message at a time). */
export const MAX_MBOX_MESSAGE = 100 * 1024 * 1024;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const ASCTIME = /(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) +(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d{1,2}) +(\d{1,2}):(\d{2})(?::(\d{2}))?(?: +[A-Z]{3,5}| +[+-]\d{4})? +(\d{4})/;
const FROM_ = Buffer.from('From ');

/** The date of an mbox `From ` line (asctime, taken as UTC), or null. */
export function fromLineDate(line: string): number | null {
  const m = ASCTIME.exec(line);
  if (!m) return null;
  const t = Date.UTC(Number(m[6]), MONTHS.indexOf(m[1]!), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5] ?? 0));
  return Number.isFinite(t) ? t : null;
}

/** The header block of a message as text (up to the first empty line). */
function headerText(raw: Buffer): string {
  let end = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (end < 0 || (lf >= 0 && lf < end)) end = lf;
  return raw.subarray(0, end < 0 ? Math.min(raw.length, 64 * 1024) : end).toString('latin1');
}

/** Flags from the Status and X-Status headers, and the Date header's time. */
function fromHeaders(raw: Buffer): { flags: string[]; date: number | null } {
  const head = headerText(raw).replace(/\r?\n[ \t]+/g, ' ');
  const status = /^Status:[ \t]*(\S*)/im.exec(head)?.[1] ?? '';
  const xstatus = /^X-Status:[ \t]*(\S*)/im.exec(head)?.[1] ?? '';
  const flags: string[] = [];
  if (status.includes('R')) flags.push('\\Seen');
  if (xstatus.includes('A')) flags.push('\\Answered');
  if (xstatus.includes('F')) flags.push('\\Flagged');
  if (xstatus.includes('D')) flags.push('\\Deleted');
  const dateHeader = /^Date:[ \t]*(.+)$/im.exec(head)?.[1];
  const date = dateHeader ? Date.parse(dateHeader.trim()) : NaN;
  return { flags, date: Number.isFinite(date) ? date : null };
}

const isBlank = (line: Buffer) => line.length === 1 ? line[0] === 0x0a : line.length === 2 && line[0] === 0x0d && line[1] === 0x0a;

/** `>From `, `>>From ` ...: an escaped body line (mboxrd; mboxo's single level reads the same). */
function escapedFrom(line: Buffer): boolean {
  let i = 0;
  while (i < line.length && line[i] === 0x3e) i++;
  return i > 0 && line.subarray(i, i + 5).equals(FROM_);
}

/**
 * Reads an mbox (mboxrd or mboxo) as a stream, one message at a time: a message starts at a
 * `From ` line at the start of the file or after an empty line; `>From ` lines lose one `>`; the
 * empty line before the next `From ` line belongs to the format, not to the message.
 */
export async function* readMbox(input: AsyncIterable<Buffer>): AsyncGenerator<MboxMessage> {
  let carry: Buffer = Buffer.alloc(0);
  let lines: Buffer[] = [];
  let size = 0;
  let fromLine: string | null = null;
  let previousBlank = true;
  let count = 0;

  function finish(): MboxMessage | null {
    if (fromLine === null) return null;
    if (lines.length > 0 && isBlank(lines[lines.length - 1]!)) lines.pop();
    const raw = Buffer.concat(lines);
    const { flags, date } = fromHeaders(raw);
    const receivedAt = fromLineDate(fromLine) ?? date ?? 0;
    lines = [];
    size = 0;
    return { raw, receivedAt, flags };
  }

  function* line(l: Buffer): Generator<MboxMessage> {
    if (previousBlank && l.subarray(0, 5).equals(FROM_)) {
      const done = finish();
      if (done) yield done;
      fromLine = l.toString('latin1');
      count++;
      previousBlank = false;
      return;
    }
    if (fromLine === null) {
      if (isBlank(l)) return; // blank lines before the first message
      throw new ApiError(422, 'Not an mbox file: it does not start with a "From " line');
    }
    previousBlank = isBlank(l);
    const body = escapedFrom(l) ? l.subarray(1) : l;
    size += body.length;
    if (size > MAX_MBOX_MESSAGE) throw new ApiError(422, `Message ${count} of the mbox is larger than ${MAX_MBOX_MESSAGE} bytes`);
    lines.push(body);
  }

  for await (const chunk of input) {
    let buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      // A copy: the chunk is not kept alive by a line of it.
      yield* line(Buffer.from(buf.subarray(start, nl + 1)));
      start = nl + 1;
    }
    carry = Buffer.from(buf.subarray(start));
    if (carry.length > MAX_MBOX_MESSAGE) throw new ApiError(422, `A line of the mbox is longer than ${MAX_MBOX_MESSAGE} bytes`);
    buf = Buffer.alloc(0);
  }
  if (carry.length) yield* line(carry);
  const last = finish();
  if (last) yield last;
}
