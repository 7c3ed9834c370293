/** Longest command line outside literals; longer is a hostile or broken client. */
export const MAX_LINE = 64 * 1024;
/** Largest literal: the APPENDLIMIT (DECISIONS.md section 13's 25 MB message size). */
export const MAX_LITERAL = 25 * 1024 * 1024;
/** Largest literal outside APPEND: names, search strings and passwords are small. */
export const MAX_SMALL_LITERAL = 64 * 1024;

/** What the reader found next in the byte stream. */
export type ReadResult =
  | { kind: 'command'; bytes: Buffer }
  /** A synchronising literal is announced: the client waits for "+" before sending it. */
  | { kind: 'continue' }
  /** A command that must be refused without reading on (tag when known); `fatal` closes the connection. */
  | { kind: 'refuse'; tag: string | null; text: string; fatal: boolean; code?: string };

const LITERAL_AT_END = /(~?)\{(\d{1,10})(\+?)\}$/;

/**
 * Splits the client's byte stream into whole commands: a line, and when it ends in a literal
 * announcement `{n}` / `{n+}` (LITERAL+), the n bytes after it and the rest of the command, all
 * in one buffer for the parser. Bounds every line and literal so a client cannot make the server
 * hold unbounded memory; a synchronising literal above the bound is refused before the client
 * sends it, a non-synchronising one (already on its way) ends the connection.
 */
export class CommandReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes of the current command already scanned (lines and literals). */
  private scanned = 0;
  /** Bytes of a literal still to come before scanning resumes. */
  private literalLeft = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  private flat(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Drops the first `n` bytes. */
  private consume(n: number): Buffer {
    const buf = this.flat();
    const out = buf.subarray(0, n);
    const rest = buf.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    this.scanned = 0;
    this.literalLeft = 0;
    return out;
  }

  /** The next complete command, a request to send a continuation, a refusal, or null (more bytes needed). */
  next(): ReadResult | null {
    for (;;) {
      const buf = this.flat();
      if (this.literalLeft > 0) {
        if (buf.length - this.scanned < this.literalLeft) return null;
        this.scanned += this.literalLeft;
        this.literalLeft = 0;
      }
      const eol = buf.indexOf('\r\n', this.scanned, 'latin1');
      if (eol < 0) {
        if (buf.length - this.scanned > MAX_LINE) return { kind: 'refuse', tag: null, text: 'line too long', fatal: true };
        return null;
      }
      if (eol - this.scanned > MAX_LINE) return { kind: 'refuse', tag: null, text: 'line too long', fatal: true };
      const line = buf.toString('latin1', this.scanned, eol);
      const m = LITERAL_AT_END.exec(line);
      if (!m) return { kind: 'command', bytes: Buffer.from(this.consume(eol + 2).subarray(0, eol)) };
      const size = Number(m[2]);
      const sync = m[3] !== '+';
      const tagOf = () => /^[^\s]+/.exec(buf.toString('latin1', 0, Math.min(buf.length, 64)))?.[0] ?? null;
      const limit = /^\S+ (UID )?APPEND /i.test(buf.toString('latin1', 0, Math.min(eol, 300))) ? MAX_LITERAL : MAX_SMALL_LITERAL;
      if (size > limit) {
        const tag = tagOf();
        if (!sync) return { kind: 'refuse', tag, text: 'literal too large', fatal: true, code: 'TOOBIG' };
        // The client waits for our "+": it never sends the bytes, so the command ends here.
        this.consume(eol + 2);
        return { kind: 'refuse', tag, text: 'literal too large', fatal: false, code: limit === MAX_LITERAL ? 'TOOBIG' : undefined };
      }
      this.scanned = eol + 2;
      this.literalLeft = size;
      // Each announcement is seen once (scanning moves past it), so "+" goes out once per literal.
      // A client announcing {0} waits for "+" too: nothing after the announcement means it is waiting.
      if (sync && (buf.length - this.scanned < size || (size === 0 && buf.length === this.scanned))) return { kind: 'continue' };
    }
  }

  /** Bytes held for commands not yet complete. */
  get pending(): number { return this.buffered; }
}
