import type { SpamVerdict } from '../inbound/spam-verdict.js';

/** Header fields a message may carry from outside that would pass for our verdict; removed on delivery. */
export const FOREIGN_SPAM_FIELDS = ['x-spam-status', 'x-spam-flag', 'x-spam-score', 'x-spam-level'];

/** The value of the SpamAssassin-style trace field of a verdict (no folding: rule names are short). */
export function spamStatusValue(v: SpamVerdict): string {
  const tests = v.reasons.length === 0 ? 'none' : v.reasons.map((r) => r.rule).join(',');
  return `${v.verdict === 'junk' ? 'Yes' : 'No'}, score=${v.score.toFixed(1)} required=${v.threshold.toFixed(1)} tests=${tests}`;
}

/** The trace field as bytes put in front of the stored message. */
export const spamStatusField = (v: SpamVerdict): Buffer => Buffer.from(`X-Spam-Status: ${spamStatusValue(v)}\r\n`, 'latin1');

/** A parsed header map as the stored copy shows it: outside X-Spam-* fields gone, ours in. */
export function withSpamStatus(headers: Record<string, string | string[]>, v: SpamVerdict): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = { 'x-spam-status': spamStatusValue(v) };
  for (const [k, val] of Object.entries(headers)) if (!FOREIGN_SPAM_FIELDS.includes(k.toLowerCase())) out[k] = val;
  return out;
}

/** Whether a message's header block holds a field the delivered copy drops. */
const FOREIGN_LINE = /^x-spam-(status|flag|score|level)\s*:/i;

/** A header line that continues the field before it. */
const continues = (line: string) => /^[ \t]/.test(line);

/**
 * Raw message bytes as the classified copy is read: our trace field after the delivery's own trace
 * fields in front (RFC 5321 4.4: Return-Path stays first; then our Received), and the outside
 * X-Spam-* fields (with their continuation lines) cut from the header block. The body is untouched.
 */
export function rewriteRaw(raw: Buffer, v: SpamVerdict): Buffer {
  const field = spamStatusField(v).toString('latin1');
  let end = raw.indexOf('\r\n\r\n');
  if (end < 0) end = raw.indexOf('\n\n');
  const head = (end < 0 ? raw : raw.subarray(0, end)).toString('latin1');
  const rest = end < 0 ? Buffer.alloc(0) : raw.subarray(end);
  const lines = head.split(/(?<=\n)/);
  let at = 0;
  for (const name of [/^return-path\s*:/i, /^received\s*:/i]) {
    if (at < lines.length && name.test(lines[at])) {
      at++;
      while (at < lines.length && continues(lines[at])) at++;
    }
  }
  // The last line of the block is unterminated (the blank line follows in `rest`).
  const out: string[] = [];
  let dropping = false;
  lines.forEach((line, i) => {
    if (i === at) out.push(field);
    if (i >= at) {
      if (continues(line)) { if (dropping) return; } else dropping = FOREIGN_LINE.test(line);
      if (dropping) return;
    }
    out.push(line);
  });
  if (at >= lines.length) {
    // Nothing after the trace fields: ours ends the block (its own line break moved to the end).
    if (out.length > 0 && !out[out.length - 1].endsWith('\n')) out[out.length - 1] += '\r\n';
    out.push(rest.length > 0 ? field.replace(/\r\n$/, '') : field);
  }
  let text = out.join('');
  // The block's last line was dropped: the line now last gives up its break so no second blank line appears.
  if (rest.length > 0) text = text.replace(/\r?\n$/, '');
  return Buffer.concat([Buffer.from(text, 'latin1'), rest]);
}

/** Bytes of the outside X-Spam-* fields (with continuations) in a message's header block: what reading a classified copy leaves out. */
export function foreignSpamFieldBytes(raw: Buffer): number {
  let end = raw.indexOf('\r\n\r\n');
  if (end < 0) end = raw.indexOf('\n\n');
  const head = (end < 0 ? raw : raw.subarray(0, end)).toString('latin1');
  if (!/^x-spam-/im.test(head)) return 0;
  const probe: SpamVerdict = { verdict: 'ham', score: 0, threshold: 0, filter: 'off', reasons: [] };
  return raw.length + spamStatusField(probe).length - rewriteRaw(raw, probe).length;
}
