import { createHash } from 'node:crypto';
import type { AddressObject, EmailAddress } from 'mailparser';
import type { ReadMail } from './mail-reader.js';
import addressparser from 'nodemailer/lib/addressparser';
import { detectExtension } from 'nodemailer/lib/mime-funcs';
import type { AuthResults, InboundAttachment, InboundMessage, RawDelivery } from '../../inbound/types.js';
import { decodeWords, headersObject, splitHeaderBlock, type HeaderLine } from '../../message/headers.js';
import { htmlToText, rawBodyText } from '../../message/body-text.js';

/** How far in the future a Date: header may lie and still be taken as the message's time. */
const MAX_CLOCK_SKEW_MS = 24 * 3600 * 1000;
const MAX_MESSAGE_ID = 995;

/** The envelope facts a parsed message is completed with. */
export type DeliveryFacts = Omit<RawDelivery, 'raw'>;

/** What the mapping needs besides the parse: our hostname and the first bytes of the raw message. */
export interface MessageContext {
  hostname: string;
  /** The first bytes of the raw message (at least its header block when it has one). */
  head: Buffer;
  auth: AuthResults | null;
}

interface Mailbox { address: string; name: string }

function flatten(list: readonly EmailAddress[] | undefined, out: Mailbox[] = []): Mailbox[] {
  for (const entry of list ?? []) {
    if (entry.group) flatten(entry.group, out);
    else if (entry.address) out.push({ address: entry.address.trim(), name: (entry.name ?? '').trim() });
  }
  return out;
}

function mailboxes(field: AddressObject | AddressObject[] | undefined): Mailbox[] {
  if (!field) return [];
  return (Array.isArray(field) ? field : [field]).flatMap((f) => flatten(f.value));
}

function mailboxesFromHeader(value: string | string[] | undefined): Mailbox[] {
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return flatten(addressparser(text).map((a) => ({ ...a, name: decodeWords(a.name ?? '') })) as EmailAddress[]);
}

/**
 * The Message-ID in its `<id>` form; when the message has none (or an unusable one) an id of our
 * own, `<uuid@hostname>`, derived from the first bytes of the raw message, which begin with our
 * Received: header (unique per transaction). Deriving it rather than drawing it keeps it stable
 * when the worker parses the same stored bytes again after a crash.
 */
export function messageIdOf(value: string | undefined, head: Buffer, hostname: string): string {
  const text = (value ?? '').trim();
  const bracketed = /<([^<>\s]+)>/.exec(text);
  if (bracketed && bracketed[0].length <= MAX_MESSAGE_ID) return bracketed[0];
  if (/^[^<>\s]+$/.test(text) && text.length <= MAX_MESSAGE_ID) return `<${text}>`;
  const h = createHash('sha256').update(head.subarray(0, 4096)).digest('hex');
  const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  return `<${uuid}@${hostname}>`;
}

/** The Date: header's time when it is a real time not far in the future, else the arrival time. */
export function receivedAtOf(date: Date | undefined, arrival: number): number {
  const t = date?.getTime();
  return t !== undefined && Number.isFinite(t) && t > 0 && t <= arrival + MAX_CLOCK_SKEW_MS ? t : arrival;
}

function attachmentOf(a: ReadMail['attachments'][number], index: number): InboundAttachment {
  const contentType = (a.contentType || 'application/octet-stream').toLowerCase();
  const detected = detectExtension(contentType);
  const ext = /^[a-z0-9]{1,10}$/.test(detected) ? detected : contentType === 'message/rfc822' ? 'eml' : 'bin';
  const filename = a.filename?.trim() || `attachment-${index + 1}.${ext}`;
  const contentId = a.cid?.trim() || null;
  const disposition = a.contentDisposition?.toLowerCase() || (contentId && a.related ? 'inline' : 'attachment');
  return { filename, contentType, content: a.content, contentId, disposition };
}

/** The recipient ingest stores the message for when it has no better idea: the first envelope recipient. */
const firstRecipient = (delivery: DeliveryFacts, headerTo: Mailbox[]) => delivery.recipients[0]?.address ?? headerTo[0]?.address ?? '';

/**
 * Maps mailparser's reading of a message to the ingestion fields. Anything mailparser could not
 * decode degrades: no From falls back to the envelope sender, no body at all falls back to the
 * raw text after the headers, a missing Message-ID is generated.
 */
export function fromParsed(parsed: ReadMail, delivery: DeliveryFacts, ctx: MessageContext): InboundMessage {
  const from = mailboxes(parsed.from)[0];
  const to = mailboxes(parsed.to);
  const html = typeof parsed.html === 'string' && parsed.html !== '' ? parsed.html : null;
  let text = typeof parsed.text === 'string' ? parsed.text : null;
  const attachments = parsed.attachments.map(attachmentOf);
  if (text === null && html !== null) text = htmlToText(html);
  if (text === null && html === null && attachments.length === 0) text = rawBodyText(ctx.head);
  return {
    messageId: messageIdOf(parsed.messageId, ctx.head, ctx.hostname),
    fromEmail: from?.address ?? delivery.mailFrom ?? '',
    fromName: from?.name || null,
    toEmail: firstRecipient(delivery, to),
    cc: mailboxes(parsed.cc).map((m) => m.address),
    bcc: mailboxes(parsed.bcc).map((m) => m.address),
    subject: parsed.subject ?? '',
    receivedAt: receivedAtOf(parsed.date, delivery.receivedAt),
    bodyText: text,
    bodyHtml: html,
    // mailparser keeps no header lines for a message whose header block never ends (no blank line).
    headers: headersObject(parsed.headerLines.length > 0 ? (parsed.headerLines as HeaderLine[]) : splitHeaderBlock(ctx.head).lines),
    attachments,
    auth: ctx.auth,
  };
}

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The message as far as our own header reading gets, for mail that mailparser gave up on: the
 * top-level headers and the raw text after them.
 */
export function fromRawOnly(delivery: DeliveryFacts, ctx: MessageContext): InboundMessage {
  const { lines } = splitHeaderBlock(ctx.head);
  const headers = headersObject(lines);
  const from = mailboxesFromHeader(headers.from)[0];
  const date = single(headers.date);
  return {
    messageId: messageIdOf(single(headers['message-id']), ctx.head, ctx.hostname),
    fromEmail: from?.address ?? delivery.mailFrom ?? '',
    fromName: from?.name || null,
    toEmail: firstRecipient(delivery, mailboxesFromHeader(headers.to)),
    cc: mailboxesFromHeader(headers.cc).map((m) => m.address),
    bcc: mailboxesFromHeader(headers.bcc).map((m) => m.address),
    subject: single(headers.subject) ?? '',
    receivedAt: receivedAtOf(date ? new Date(date) : undefined, delivery.receivedAt),
    bodyText: rawBodyText(ctx.head),
    bodyHtml: null,
    headers,
    attachments: [],
    auth: ctx.auth,
  };
}
