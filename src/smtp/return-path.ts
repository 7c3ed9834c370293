import { Transform, type TransformCallback } from 'node:stream';

/**
 * DECISIONS.md section 21: a `Return-Path:` field that arrives with a message is removed. Only the
 * final delivery adds one (RFC 5321 section 4.4), with the envelope sender, in front of the
 * message; a message in transit (a forwarded copy, a submitted message) carries none.
 */

const RETURN_PATH = /^return-path[ \t]*:/i;
/** Enough of a line to tell whether it starts a Return-Path field. */
const NAME_OCTETS = 13;

/**
 * The message without any `Return-Path:` field (with its folded continuation lines) in its header
 * section; the same Buffer when it has none.
 */
export function withoutReturnPath(raw: Buffer): Buffer {
  const end = headerEnd(raw);
  const head = raw.subarray(0, end).toString('latin1');
  if (!/(^|\n)return-path[ \t]*:/i.test(head)) return raw;
  const kept: string[] = [];
  let dropping = false;
  for (const line of head.split(/(?<=\n)/)) {
    if (/^[ \t]/.test(line)) {
      if (!dropping) kept.push(line); // a folded continuation goes with its field
      continue;
    }
    dropping = RETURN_PATH.test(line);
    if (!dropping) kept.push(line);
  }
  return Buffer.concat([Buffer.from(kept.join(''), 'latin1'), raw.subarray(end)]);
}

/** Where the header section ends: after its last field line (before the empty line), or the whole message. */
function headerEnd(raw: Buffer): number {
  if (raw[0] === 0x0a || (raw[0] === 0x0d && raw[1] === 0x0a)) return 0;
  const crlf = raw.indexOf('\n\r\n');
  const lf = raw.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  return ends.length === 0 ? raw.length : Math.min(...ends) + 1;
}

/**
 * The same as a stream, for SMTP DATA: drops `Return-Path:` fields from the header section as the
 * bytes go by, then passes the body through untouched. Holds at most one header line.
 */
export class ReturnPathFilter extends Transform {
  private inHeader = true;
  private dropping = false;
  private line: Buffer[] = [];
  private lineDecided: boolean | null = null; // the current line: null undecided, true kept, false dropped

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (!this.inHeader) { this.push(chunk); return done(); }
    let start = 0;
    while (start < chunk.length && this.inHeader) {
      const nl = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl + 1);
      start += piece.length;
      this.takeLinePiece(piece, nl >= 0);
    }
    if (start < chunk.length) this.push(chunk.subarray(start));
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.line.length > 0 && this.lineDecided !== false) this.push(Buffer.concat(this.line));
    done();
  }

  /** A piece of the current header line; `complete` when it ends the line. */
  private takeLinePiece(piece: Buffer, complete: boolean): void {
    if (this.lineDecided === null) {
      this.line.push(piece);
      const head = Buffer.concat(this.line);
      if (!complete && head.length < NAME_OCTETS) return;
      this.line = [head];
      this.lineDecided = this.decide(head.subarray(0, NAME_OCTETS).toString('latin1'));
      if (this.lineDecided) { this.push(head); this.line = []; }
    } else if (this.lineDecided) {
      this.push(piece);
    }
    if (complete) {
      this.line = [];
      this.lineDecided = null;
    }
  }

  /** Whether a header line (its first octets) is kept; notes the end of the header section. */
  private decide(start: string): boolean {
    if (start.startsWith('\r\n') || start.startsWith('\n')) {
      this.inHeader = false;
      return true;
    }
    if (start.startsWith(' ') || start.startsWith('\t')) return !this.dropping;
    this.dropping = RETURN_PATH.test(start);
    return !this.dropping;
  }
}
