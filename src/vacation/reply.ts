import { randomUUID } from 'node:crypto';
import { base64Body, encodeHeaderValue } from './headers.js';

const MESSAGE_ID = /<[^<>\s]+>/;

/**
 * A vacation reply (RFC 5230 section 5, RFC 3834 section 3): from the mailbox, to the sender,
 * "Auto: <subject>" unless a subject is given, In-Reply-To and References to the original,
 * Auto-Submitted: auto-replied. `mime` means the reason is a MIME entity with its own header fields.
 */
export function vacationReply(o: {
  from: string; to: string; subject: string | null; originalSubject: string; reason: string; mime: boolean;
  originalMessageId: string | null; originalReferences: string | null; now: Date;
}): Buffer {
  const domain = o.from.slice(o.from.lastIndexOf('@') + 1) || 'localhost';
  const id = o.originalMessageId ? MESSAGE_ID.exec(o.originalMessageId)?.[0] ?? null : null;
  const refs = [o.originalReferences?.match(/<[^<>\s]+>/g)?.slice(-10).join(' ') ?? '', id ?? ''].join(' ').trim();
  const subject = o.subject ?? `Auto: ${o.originalSubject}`;
  const head = [
    `From: <${o.from}>`,
    `To: <${o.to}>`,
    `Subject: ${encodeHeaderValue(subject)}`,
    `Date: ${o.now.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${randomUUID()}@${domain}>`,
    ...(id ? [`In-Reply-To: ${id}`] : []),
    ...(refs ? [`References: ${refs}`] : []),
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
  ];
  if (o.mime) return Buffer.from(`${head.join('\r\n')}\r\n${o.reason.replace(/\r?\n/g, '\r\n')}\r\n`);
  head.push('Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64');
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${base64Body(o.reason)}\r\n`);
}

/**
 * The refusal of `reject`/`ereject` (RFC 5429 section 2.1): a message to the envelope sender from
 * the mailbox domain's MAILER-DAEMON, with the reason and the original header section.
 */
export function refusalMessage(o: { mailbox: string; to: string; reason: string; originalHeaders: string; originalSubject: string; now: Date }): Buffer {
  const domain = o.mailbox.slice(o.mailbox.lastIndexOf('@') + 1) || 'localhost';
  const boundary = `refusal-${randomUUID()}`;
  const text = `Your message to <${o.mailbox}> was refused by the recipient's filter:\r\n\r\n${o.reason}\r\n`;
  return Buffer.from([
    `From: Mail Delivery System <MAILER-DAEMON@${domain}>`,
    `To: <${o.to}>`,
    `Subject: ${encodeHeaderValue(`Rejected: ${o.originalSubject}`)}`,
    `Date: ${o.now.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${randomUUID()}@${domain}>`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    base64Body(text),
    `--${boundary}`,
    'Content-Type: text/rfc822-headers; charset=utf-8',
    '',
    o.originalHeaders.replace(/\r?\n/g, '\r\n').trimEnd(),
    `--${boundary}--`,
    '',
  ].join('\r\n'));
}
