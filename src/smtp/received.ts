import { domainToASCII } from 'node:url';

/** What a Received: trace header records about one SMTP transaction. */
export interface TraceInfo {
  heloName: string;
  clientHostname: string;
  remoteAddress: string;
  hostname: string;
  /** ESMTP, ESMTPS, ... as RFC 3848 names it. */
  protocol: string;
  id: string;
  tlsCipher: string | null;
  recipients: string[];
  at: number;
}

// Client-supplied names end up in a header: keep them to printable characters without comment syntax.
const clean = (s: string) => s.replace(/[^\x21-\x7e]|[()\\]/g, '').slice(0, 255) || 'unknown';

/** The last second formatted (every message of that second reuses it: the acceptor runs this per message). */
let lastDate = { second: NaN, text: '' };

/** An RFC 5322 date-time in UTC, e.g. `Tue, 01 Apr 2025 10:00:00 +0000`. */
export function rfc5322Date(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastDate.second) lastDate = { second, text: new Date(second * 1000).toUTCString().replace(/GMT$/, '+0000') };
  return lastDate.text;
}

/**
 * The Received: header (RFC 5321 section 4.4) prepended to every message we accept, folded and
 * CRLF-terminated. `for` names the recipient only when there is exactly one, so a message does not
 * reveal its other (Bcc) recipients.
 */
export function receivedHeader(info: TraceInfo): string {
  const ip = info.remoteAddress.replace(/^::ffff:/i, '');
  const literal = ip.includes(':') ? `IPv6:${ip}` : ip;
  const lines = [
    `Received: from ${clean(info.heloName)} (${clean(info.clientHostname)} [${literal}])`,
    `\tby ${info.hostname} (Mailstead) with ${clean(info.protocol)} id ${clean(info.id)}`,
  ];
  if (info.tlsCipher) lines.push(`\t(using ${info.tlsCipher.replace(/[^\x20-\x7e]|[()\\]/g, '')})`);
  const rcpt = info.recipients.length === 1 ? `\tfor <${info.recipients[0].replace(/[<>\s]/g, '')}>; ` : '\t';
  lines.push(`${rcpt}${rfc5322Date(info.at)}`);
  return lines.join('\r\n') + '\r\n';
}

/**
 * The Return-Path: header a final delivery adds (RFC 5321 section 4.4) with the envelope sender,
 * `<>` for a bounce. smtp-server hands the sender over with its domain in Unicode, so the domain is
 * written as its A-label again (what an ASCII-only sender sent, and equivalent otherwise).
 */
export function returnPathHeader(sender: string | null): string {
  // A busy sender sends many messages in a row: its header is made once.
  if (sender === lastReturnPath.sender) return lastReturnPath.header;
  const header = makeReturnPath(sender);
  lastReturnPath = { sender, header };
  return header;
}

let lastReturnPath: { sender: string | null | undefined; header: string } = { sender: undefined, header: '' };

function makeReturnPath(sender: string | null): string {
  const address = (sender ?? '').replace(/[<>\s]/g, '');
  const at = address.lastIndexOf('@');
  const ascii = at > 0 ? `${address.slice(0, at)}@${domainToASCII(address.slice(at + 1)) || address.slice(at + 1)}` : address;
  return `Return-Path: <${ascii}>\r\n`;
}
