import { randomUUID } from 'node:crypto';
import { simpleParser, type AddressObject, type EmailAddress } from 'mailparser';
import addressparser from 'nodemailer/lib/addressparser';
import { rfc5322Date } from '../smtp/received.js';
import { headerEnd, splitHeaderBlock, unfold } from '../message/headers.js';

/** The header block of a message (without the blank line), or the whole message when it has no body. */
function headOf(raw: Buffer): Buffer {
  const end = headerEnd(raw);
  return end ? raw.subarray(0, end.headEnd) : raw;
}

/** Addresses of a parsed address list, group members included. */
function flatten(list: Array<{ address?: string; group?: unknown[] }>): string[] {
  return list.flatMap((a) => (Array.isArray(a.group) ? flatten(a.group as typeof list) : [a.address ?? '']));
}

/**
 * The one address of the From: header, or a reason why there is none (DECISIONS.md section 13).
 * The header must occur once and name exactly one address, and it must be the same address read
 * two ways: from the bytes as they are (nodemailer's addressparser, no decoding) and as a mail
 * client shows it (mailparser, which decodes RFC 2047 words). An encoded word that decodes to a
 * different or a second address is refused, whichever way a receiving client reads it.
 */
export async function fromHeaderAddress(raw: Buffer): Promise<{ address: string } | { problem: string }> {
  const head = headOf(raw);
  const froms = splitHeaderBlock(head).lines.filter((l) => l.key === 'from');
  if (froms.length !== 1) return { problem: froms.length === 0 ? 'the message has no From: header' : 'the message has more than one From: header' };
  const value = unfold(froms[0].line.slice(froms[0].line.indexOf(':') + 1));
  const plain = flatten(addressparser(value) as Array<{ address?: string; group?: unknown[] }>);
  // Plain ASCII without encoded words reads the same both ways (mailparser runs the same
  // addressparser and only decodes RFC 2047 words and 8-bit text): the second reading, a full
  // mailparser run costing more than the rest of the checks together, is only needed otherwise.
  if (!value.includes('=?') && /^[\x20-\x7e\t]*$/.test(value)) {
    if (plain.length !== 1) return { problem: 'the From: header must name exactly one address' };
    const only = plain[0].trim().toLowerCase();
    return only ? { address: only } : { problem: 'the From: header address is ambiguous' };
  }
  const parsed = await simpleParser(Buffer.concat([head, Buffer.from('\r\n')]), { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  const from = parsed.from as AddressObject | undefined;
  const decoded = flatten((from?.value ?? []) as Array<EmailAddress & { group?: unknown[] }>);
  if (plain.length !== 1 || decoded.length !== 1) return { problem: 'the From: header must name exactly one address' };
  const a = plain[0].trim().toLowerCase();
  if (!a || a !== decoded[0].trim().toLowerCase()) return { problem: 'the From: header address is ambiguous' };
  // A display name made of encoded words that decodes to address syntax would show a client another sender.
  const name = (from?.value[0]?.name ?? '');
  if (value.includes('=?') && /[@<>]/.test(name)) return { problem: 'the From: display name hides an address in encoded words' };
  return { address: a };
}

/** The value of the first header `name` (lower case) of a message, unfolded and trimmed, or null. */
export function headerValue(raw: Buffer, name: string): string | null {
  const line = splitHeaderBlock(headOf(raw)).lines.find((l) => l.key === name);
  return line ? unfold(line.line.slice(line.line.indexOf(':') + 1)).trim() : null;
}

/**
 * Adds Message-ID (at the From domain) and Date when the message lacks them (RFC 5322 section 3.6
 * asks for both; RFC 6409 section 8 lets a submission server add them). Answers the bytes and the
 * Message-ID the message carries.
 */
export function completeHeaders(raw: Buffer, fromDomain: string, now: number): { raw: Buffer; messageId: string } {
  const added: string[] = [];
  let messageId = headerValue(raw, 'message-id');
  if (!messageId) {
    messageId = `<${randomUUID()}@${fromDomain}>`;
    added.push(`Message-ID: ${messageId}\r\n`);
  }
  if (headerValue(raw, 'date') === null) added.push(`Date: ${rfc5322Date(now)}\r\n`);
  return { raw: added.length ? Buffer.concat([Buffer.from(added.join(''), 'latin1'), raw]) : raw, messageId };
}
