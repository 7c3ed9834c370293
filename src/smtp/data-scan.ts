import { SMTPStream } from 'smtp-server/lib/smtp-stream.js';

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;
const LF_DOT = Buffer.from('\n.');

type Done = (err?: Error | null) => void;

/**
 * smtp-server's DATA phase, with the same results, scanned natively.
 *
 * `SMTPStream._feedDataStream` (smtp-server 3.21) looks at every byte of a message in a JavaScript
 * loop and copies every incoming chunk once more to prepend the four bytes it held back from the
 * previous one. Profiled in the 74 KB benchmark, that loop was the main thread's largest cost after
 * GC (~220 us per message), and the copies were a good part of what the GC collected. This version
 * finds line-start dots with `Buffer.indexOf('\n.')` and holds bytes back only when a chunk ends
 * where a terminator or an escape dot could continue into the next chunk (an ending CR, LF, or a
 * line-start dot not yet decidable), so most chunks are never copied.
 *
 * The meaning is smtp-server's: `\r\n.\r\n` ends the data, the first dot of a line starting with
 * `..` is removed, a leading `.\r\n` ends an empty message and a leading `..` loses its first dot,
 * bytes are counted as they are emitted, and the writes respect the data stream's backpressure.
 * One difference, on purpose: a dot right after a bare LF at the start of a message is treated as
 * at a line start (smtp-server only looks from the third byte on).
 */
export function feedDataStream(this: SMTPStream, input: Buffer, done: Done): void {
  const out = this._dataStream;
  let w = input;
  if (this._lastBytes && this._lastBytes.length) {
    w = Buffer.concat([this._lastBytes, input], this._lastBytes.length + input.length);
  }
  this._lastBytes = false;
  const len = w.length;
  let start = 0;

  if (this._atDataStart) {
    if (w[0] === DOT) {
      // Undecidable until the third byte: `.`, `.\r` may still become the empty message's end.
      if (len < 3 && (len === 1 || w[1] === CR)) {
        this._lastBytes = w;
        return done();
      }
      if (w[1] === CR && w[2] === LF) return this._endDataMode(false, w.subarray(3), done);
      if (w[1] === DOT) {
        start = 1;
        this._atDataStart = false;
      }
    }
  }

  const pieces: Buffer[] = [];
  let hold = len;
  let from = start;
  for (;;) {
    const lf = w.indexOf(LF_DOT, from);
    if (lf === -1) break;
    const dot = lf + 1;
    const next = dot + 1 < len ? w[dot + 1] : -1;
    if (next === DOT) {
      // An escape dot: emit up to it, drop it, and go on after the dot that stays.
      pieces.push(w.subarray(start, dot));
      start = dot + 1;
      from = dot + 1;
      continue;
    }
    if (next === -1 || (next === CR && dot + 2 >= len)) {
      // The bytes that decide it have not arrived: hold back from the line end on.
      hold = lf > start && w[lf - 1] === CR ? lf - 1 : lf;
      break;
    }
    if (next === CR && w[dot + 2] === LF && lf > 0 && w[lf - 1] === CR) {
      // The terminator: everything before the dot, its CRLF included, is the message's end.
      for (const p of pieces) emit(this, out, p);
      const last = w.subarray(start, dot);
      this._countDataBytes(last.length);
      return this._endDataMode(last, w.subarray(dot + 3), done);
    }
    from = dot;
  }
  if (hold === len && len > start) {
    // A chunk ending in CR or LF may be followed by the rest of a terminator or an escape dot.
    const end = w[len - 1];
    if (end === CR) hold = len - 1;
    else if (end === LF) hold = len >= 2 && w[len - 2] === CR && len - 2 >= start ? len - 2 : len - 1;
  }
  if (hold < len) this._lastBytes = w.subarray(hold);
  if (hold > start) pieces.push(w.subarray(start, hold));
  let handled = true;
  for (const p of pieces) handled = emit(this, out, p);
  if (handled || !out || out.destroyed) return done();
  // A stream that the application destroys never drains, it only closes.
  const resume = () => {
    out.removeListener('drain', resume);
    out.removeListener('close', resume);
    done();
  };
  out.once('drain', resume);
  out.once('close', resume);
}

/** Counts and writes one piece of message; false when the data stream asks to wait for 'drain'. */
function emit(stream: SMTPStream, out: SMTPStream['_dataStream'], piece: Buffer): boolean {
  if (piece.length === 0) return true;
  stream._countDataBytes(piece.length);
  if (!out || !out.writable) return true;
  return out.write(piece);
}

/** Replaces smtp-server's DATA scanner with `feedDataStream` (server.ts calls this once). */
export function installDataScan(): void {
  SMTPStream.prototype._feedDataStream = feedDataStream;
}
