import type { StoredMessage } from '../inbound/message.js';
import { encodeHeaderValue } from '../vacation/headers.js';

/**
 * API mail (POST /v1/mail/inbound) has no bytes: the filter judges a plain rendering of its header
 * fields and text (attachments left out; Sieve's tests read headers, envelope and body text).
 */
export function renderForFilter(m: StoredMessage, rcpt: string): Buffer {
  const lines: string[] = [];
  const given = new Set(Object.keys(m.headers).map((k) => k.toLowerCase()));
  const put = (name: string, value: string) => { if (!given.has(name.toLowerCase())) lines.push(`${name}: ${value}`); };
  put('From', m.fromName ? `${encodeHeaderValue(m.fromName)} <${m.fromEmail}>` : `<${m.fromEmail}>`);
  put('To', m.toEmail || rcpt);
  if (m.cc.length) put('Cc', m.cc.join(', '));
  put('Subject', encodeHeaderValue(m.subject));
  put('Message-ID', m.messageId.startsWith('<') ? m.messageId : `<${m.messageId}>`);
  put('Date', new Date(m.receivedAt).toUTCString().replace('GMT', '+0000'));
  for (const [name, value] of Object.entries(m.headers)) {
    if (!/^[!-9;-~]+$/.test(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${String(v).replace(/\r?\n/g, ' ')}`);
  }
  lines.push('MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit');
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${(m.bodyText ?? m.bodyHtml ?? '').replace(/\r?\n/g, '\r\n')}`);
}
