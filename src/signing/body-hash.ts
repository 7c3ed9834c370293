import { createHash } from 'node:crypto';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';

/** A CR not followed by LF, or an LF not preceded by CR. */
const BARE_LINE_BREAK = /\r(?!\n)|(?<!\r)\n/;
const TRAILING_WSP = /[ \t]+\r\n/g;
/** A run of whitespace that is not already a single space (single spaces, most of them, are left alone). */
const WSP_RUN = /\t[ \t]*| [ \t]+/g;
const TRAILING_EMPTY_LINES = /(?:\r\n)+$/;

/**
 * The relaxed SHA-256 body hash of DKIM (RFC 6376 3.4.4: whitespace at line ends dropped, runs
 * of spaces and tabs made one space, empty lines at the end dropped, one CRLF at the end of a
 * non-empty body), base64.
 *
 * mailauth's hasher copies every line that needs a change into a buffer of its own and hashes
 * line by line: a 5 KB body with trailing spaces cost ~0.2 ms of the main thread and much of its
 * garbage per forwarded message. A body that is CRLF lines throughout and ends with CRLF (what
 * SMTP DATA delivers) is canonicalised here in three string passes with the same result; any
 * other body (bare CR or LF, no final line break, where mailauth's reading of the rule is the
 * one verifiers of our signatures share) goes through mailauth's hasher.
 */
export function relaxedBodyHash(body: Buffer): string {
  // latin1 maps each byte to one char and back: 8-bit bytes are hashed unchanged.
  const text = body.toString('latin1');
  if (text.length > 0 && (!text.endsWith('\r\n') || BARE_LINE_BREAK.test(text))) {
    const hasher = dkimBody('relaxed', 'sha256', false);
    hasher.update(body);
    return hasher.digest('base64');
  }
  const lines = text.replace(TRAILING_WSP, '\r\n').replace(WSP_RUN, ' ').replace(TRAILING_EMPTY_LINES, '');
  const hash = createHash('sha256');
  if (lines.length > 0) hash.update(lines, 'latin1').update('\r\n');
  return hash.digest('base64');
}
