/**
 * The ManageSieve command reader (RFC 5804 section 4): a command is atoms, quoted strings and
 * literals up to CRLF. Literals come as `{n+}` (the form clients must use) or `{n}`; ManageSieve has
 * no continuation request, so both are read the same way. Input is kept until a whole command is
 * there; while a literal is outstanding nothing is scanned again.
 */

export type Token = { kind: 'atom'; text: string } | { kind: 'string'; bytes: Buffer };

export type Parsed =
  | { kind: 'command'; tokens: Token[] }
  /** A malformed command: answered NO; its input up to the end of its line is dropped. */
  | { kind: 'bad'; reason: string }
  /** Input that cannot be resynchronised (a literal or line over the limits): the connection ends. */
  | { kind: 'fatal'; reason: string };

/** Limits of one command. */
export const MAX_LINE_BYTES = 8 * 1024;
export const MAX_LITERAL_BYTES = 128 * 1024;
export const MAX_TOKENS = 16;

const ATOM_STOP = new Set([0x20, 0x0d, 0x0a, 0x22, 0x7b, 0x28, 0x29]);

export class CommandReader {
  private buf: Buffer = Buffer.alloc(0);
  /** Bytes the buffer must hold before scanning again (a literal is still arriving). */
  private needed = 0;

  /** A malformed command's line has not ended yet: input is dropped through its LF. */
  private skipping = false;

  push(data: Buffer): void {
    if (this.skipping) {
      const lf = data.indexOf(0x0a);
      if (lf < 0) return;
      this.skipping = false;
      data = data.subarray(lf + 1);
    }
    this.buf = this.buf.length === 0 ? data : Buffer.concat([this.buf, data]);
  }

  /** Drops everything not yet read (after STARTTLS nothing sent in clear text may run). */
  discard(): void {
    this.buf = Buffer.alloc(0);
    this.skipping = false;
    this.needed = 0;
  }

  /** The next whole command, or null when more input is needed. */
  next(): Parsed | null {
    if (this.buf.length === 0 || this.buf.length < this.needed) return null;
    const r = this.scan();
    if (r === null) return null;
    this.needed = 0;
    return r;
  }

  /** Drops input through the next LF (after a malformed command). Returns false when there is none yet. */
  private skipLine(from: number): boolean {
    const lf = this.buf.indexOf(0x0a, from);
    if (lf < 0) {
      this.buf = Buffer.alloc(0);
      this.skipping = true;
      return false;
    }
    this.buf = this.buf.subarray(lf + 1);
    return true;
  }

  private scan(): Parsed | null {
    const b = this.buf;
    const tokens: Token[] = [];
    let i = 0;
    let literalBytes = 0;
    const bad = (reason: string, at: number): Parsed => { this.skipLine(at); return { kind: 'bad', reason }; };
    for (;;) {
      while (i < b.length && b[i] === 0x20) i++;
      if (i - literalBytes > MAX_LINE_BYTES) return { kind: 'fatal', reason: 'command line too long' };
      if (i >= b.length) return this.incomplete(b.length);
      const c = b[i]!;
      if (c === 0x0d || c === 0x0a) {
        if (c === 0x0d) {
          if (i + 1 >= b.length) return this.incomplete(b.length);
          if (b[i + 1] !== 0x0a) return bad('bare CR in command', i);
          i++;
        }
        this.buf = b.subarray(i + 1);
        if (tokens.length === 0) return this.buf.length ? this.scan() : null; // empty lines are ignored
        return { kind: 'command', tokens };
      }
      if (tokens.length >= MAX_TOKENS) return bad('too many arguments', i);
      if (c === 0x22) {
        const parts: number[] = [];
        let j = i + 1;
        let closed = false;
        for (; j < b.length; j++) {
          const d = b[j]!;
          if (d === 0x5c) {
            if (j + 1 >= b.length) break;
            const e = b[j + 1]!;
            if (e !== 0x22 && e !== 0x5c) return bad('invalid escape in quoted string', j);
            parts.push(e);
            j++;
          } else if (d === 0x22) { closed = true; break; }
          else if (d === 0x0d || d === 0x0a || d === 0) return bad('line break or NUL in quoted string', j);
          else parts.push(d);
          if (parts.length > MAX_LINE_BYTES) return { kind: 'fatal', reason: 'quoted string too long' };
        }
        if (!closed) return this.incomplete(b.length);
        tokens.push({ kind: 'string', bytes: Buffer.from(parts) });
        i = j + 1;
        continue;
      }
      if (c === 0x7b) {
        const close = b.indexOf(0x7d, i);
        if (close < 0) {
          if (b.length - i > 24) return bad('malformed literal', i);
          return this.incomplete(b.length);
        }
        const m = /^\{([0-9]{1,10})(\+?)\}$/.exec(b.subarray(i, close + 1).toString('latin1'));
        if (!m) return bad('malformed literal', i);
        const n = Number(m[1]);
        if (n > MAX_LITERAL_BYTES) return { kind: 'fatal', reason: `literal of ${n} bytes is over the limit of ${MAX_LITERAL_BYTES}` };
        let start = close + 1;
        if (start >= b.length) return this.incomplete(start + 1);
        if (b[start] === 0x0d) start++;
        if (start >= b.length) return this.incomplete(start + 1);
        if (b[start] !== 0x0a) return bad('literal must be followed by CRLF', start);
        start++;
        if (b.length < start + n) return this.incomplete(start + n);
        tokens.push({ kind: 'string', bytes: Buffer.from(b.subarray(start, start + n)) });
        literalBytes += n;
        i = start + n;
        continue;
      }
      let j = i;
      while (j < b.length && !ATOM_STOP.has(b[j]!) && b[j]! > 0x20 && b[j]! < 0x7f) j++;
      if (j === i) return bad('unexpected character', i);
      if (j >= b.length) {
        if (j - i > MAX_LINE_BYTES) return { kind: 'fatal', reason: 'line too long' };
        return this.incomplete(b.length);
      }
      tokens.push({ kind: 'atom', text: b.subarray(i, j).toString('latin1') });
      i = j;
    }
  }

  /** Waits for more input: at least `needAtLeast` bytes, and always one more than there is now. */
  private incomplete(needAtLeast: number): null {
    this.needed = Math.max(needAtLeast, this.buf.length + 1);
    return null;
  }

  /** Bytes buffered (the session ends a connection that buffers too much without a command). */
  get buffered(): number { return this.buf.length; }
}
