import { randomBytes } from 'node:crypto';
import MimeNode from 'nodemailer/lib/mime-node';

/** What a delivery status notification reports: one recipient that could not be delivered to. */
export interface DsnInput {
  /** Our host name (MAILSTEAD_HOSTNAME): Reporting-MTA, and the domain of MAILER-DAEMON. */
  reportingMta: string;
  /** Who the DSN goes to: the failed message's envelope sender. */
  originalSender: string;
  recipient: string;
  /** RFC 3463 status, e.g. '5.1.1', '5.1.10', '5.4.6', '4.4.7'. */
  status: string;
  /** The remote's last reply, e.g. '550 5.1.1 <x@y>: no such user'; null when there was none. */
  diagnostic: string | null;
  /** The host that gave that reply, when one did. */
  remoteMta?: string | null;
  /** The header section of the failed message (a whole message is cut at its blank line). */
  originalHeaders: Buffer;
  arrivalDate: Date;
  now: Date;
}

/** Headers larger than this are cut at a line boundary: a DSN must stay small whatever it reports on. */
const MAX_RETURNED_HEADER_BYTES = 64 * 1024;
const STATUS = /^[245]\.\d{1,3}\.\d{1,3}$/;

/** What each status means, in words for the human-readable part (RFC 3463). */
function explain(status: string): string {
  const known: Record<string, string> = {
    '5.1.1': 'the recipient address does not exist at its mail server',
    '5.1.2': 'the recipient domain does not exist',
    '5.1.10': 'the recipient domain publishes a null MX record: it accepts no mail',
    '5.4.4': 'no mail server for the recipient domain could be found or used',
    '5.4.6': 'the message was forwarded too many times (a forwarding loop)',
    '4.4.7': 'the message could not be delivered for too long and was given up',
    '5.2.2': 'the recipient mailbox is full',
    '5.3.4': 'the message is too big for the recipient mail server',
  };
  return known[status] ?? (status.startsWith('5.') ? 'the recipient mail server refused it permanently' : 'delivery kept failing');
}

/** RFC 5322 date (Thu, 26 Nov 2026 04:00:00 +0000). */
const mailDate = (d: Date) => d.toUTCString().replace(/GMT$/, '+0000');

/** One line of printable US-ASCII: line breaks become spaces, other control and 8-bit characters '?'. */
function oneAsciiLine(text: string): string {
  return text.replace(/\r?\n|\r/g, ' ').replace(/[^\x20-\x7e]/g, '?').replace(/\s+/g, ' ').trim();
}

/**
 * An address for an address-type field: `rfc822; a@b` when it is ASCII, else RFC 6533's `utf-8`
 * type with the non-ASCII characters as \x{HEX}, so the report part stays 7-bit.
 */
function addressField(address: string): string {
  const clean = address.replace(/[\x00-\x1f\x7f]/g, '');
  if (/^[\x20-\x7e]*$/.test(clean)) return `rfc822; ${clean}`;
  const encoded = [...clean].map((c) => {
    const code = c.codePointAt(0)!;
    return code > 0x7e || c === '\\' ? `\\x{${code.toString(16).toUpperCase()}}` : c;
  }).join('');
  return `utf-8; ${encoded}`;
}

/** Folds a field at spaces so no line passes 78 characters where that can be helped (RFC 5322 2.2.3). */
function fold(field: string): string {
  const words = field.split(' ');
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && line.length + 1 + word.length > 78) {
      lines.push(line);
      line = ` ${word}`;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join('\r\n');
}

/** The header section of `headers` (up to its blank line), cut at a line boundary when too large. */
function headerSection(headers: Buffer): Buffer {
  let end = headers.length;
  for (let i = 0; i < headers.length; i++) {
    if (headers[i] !== 0x0a) continue;
    if (headers[i + 1] === 0x0a) { end = i + 1; break; }
    if (headers[i + 1] === 0x0d && headers[i + 2] === 0x0a) { end = i + 1; break; }
  }
  if (end > MAX_RETURNED_HEADER_BYTES) end = headers.lastIndexOf(0x0a, MAX_RETURNED_HEADER_BYTES - 1) + 1;
  return headers.subarray(0, end);
}

/** The message/delivery-status body: per-message fields, a blank line, the recipient's fields (RFC 3464 2.2, 2.3). */
function deliveryStatus(input: DsnInput, status: string): string {
  const perMessage = [
    `Reporting-MTA: dns; ${oneAsciiLine(input.reportingMta)}`,
    `Arrival-Date: ${mailDate(input.arrivalDate)}`,
  ];
  const perRecipient = [
    `Final-Recipient: ${addressField(input.recipient)}`,
    'Action: failed',
    `Status: ${status}`,
  ];
  if (input.remoteMta) perRecipient.push(`Remote-MTA: dns; ${oneAsciiLine(input.remoteMta)}`);
  if (input.diagnostic) perRecipient.push(fold(`Diagnostic-Code: smtp; ${oneAsciiLine(input.diagnostic)}`));
  perRecipient.push(`Last-Attempt-Date: ${mailDate(input.now)}`);
  return `${perMessage.join('\r\n')}\r\n\r\n${perRecipient.join('\r\n')}\r\n`;
}

function humanText(input: DsnInput, status: string): string {
  const lines = [
    `This is the mail system at ${oneAsciiLine(input.reportingMta)}.`,
    '',
    'Your message could not be delivered to one of its recipients:',
    '',
    `    <${input.recipient}>: ${explain(status)}.`,
  ];
  if (input.diagnostic) {
    lines.push('', `The mail server${input.remoteMta ? ` ${oneAsciiLine(input.remoteMta)}` : ''} answered:`, '', `    ${oneAsciiLine(input.diagnostic)}`);
  }
  lines.push('', 'The headers of your message are attached.', '');
  return lines.join('\r\n');
}

/**
 * A delivery status notification (RFC 3464): multipart/report with report-type=delivery-status,
 * a human part, the message/delivery-status part and the original headers as text/rfc822-headers.
 * From MAILER-DAEMON@<reportingMta>, Auto-Submitted: auto-replied (RFC 3834), so that other
 * systems neither answer it nor bounce it back. The envelope sender to use with it is <>.
 */
export async function buildDsn(input: DsnInput): Promise<Buffer> {
  // An unusable status from a remote still deserves a report: the generic permanent one stands in.
  const status = STATUS.test(input.status) ? input.status : '5.0.0';
  const host = oneAsciiLine(input.reportingMta);
  const root = new MimeNode('multipart/report; report-type=delivery-status', { hostname: host });
  root.setHeader('From', { name: 'Mail Delivery System', address: `MAILER-DAEMON@${host}` });
  root.setHeader('To', input.originalSender);
  root.setHeader('Subject', status.startsWith('4.') ? 'Undelivered Mail: delivery period expired' : 'Undelivered Mail Returned to Sender');
  root.setHeader('Date', mailDate(input.now));
  root.setHeader('Message-ID', `<dsn.${input.now.getTime().toString(36)}.${randomBytes(9).toString('hex')}@${host}>`);
  root.setHeader('Auto-Submitted', 'auto-replied');

  root.createChild('text/plain; charset=us-ascii').setHeader('Content-Description', 'Notification').setContent(humanText(input, status));
  root.createChild('message/delivery-status')
    .setHeader('Content-Description', 'Delivery report')
    .setHeader('Content-Transfer-Encoding', '7bit')
    .setContent(deliveryStatus(input, status));
  const headers = headerSection(input.originalHeaders);
  root.createChild('text/rfc822-headers')
    .setHeader('Content-Description', 'Undelivered message headers')
    .setContent(headers.length > 0 ? headers : Buffer.from('\r\n'));
  return root.build();
}
