import { randomUUID } from 'node:crypto';
import { simpleParser, type AddressObject } from 'mailparser';
import type { EmailFiles } from '../emails/files.js';
import type { AppendInput, FolderMessages } from '../emails/folders/index.js';
import type { Lockout } from '../mailboxes/lockout.js';
import type { MailboxLogins } from '../mailboxes/logins.js';
import { safeStrings } from '../inbound/safe-text.js';
import { imapSummary } from '../message/summary.js';

const RAW_CACHE = 8;

/**
 * What IMAP sessions use of the rest of the appliance: the folder view of stored mail, message
 * bytes, logins and the lock-out. It speaks only to the emails and mailboxes capabilities'
 * services; nothing in src/imap touches the database itself.
 */
export function createMailstore(deps: { messages: FolderMessages; files: EmailFiles; logins: MailboxLogins; lockout: Lockout; hostname: string }) {
  return {
    ...deps,

    /** A per-session reader of message bytes that keeps the last few (FETCH asks for parts of one message many times). */
    rawReader(tenantId: number) {
      const cache = new Map<number, Buffer>();
      return async (id: number): Promise<Buffer> => {
        const hit = cache.get(id);
        if (hit) return hit;
        const raw = await deps.files.rawBytes(tenantId, id);
        cache.set(id, raw);
        if (cache.size > RAW_CACHE) cache.delete(cache.keys().next().value!);
        return raw;
      };
    },

    /** An APPENDed message parsed into the fields the REST face shows, and IMAP's summary of it. */
    parseAppend: (raw: Buffer, flags: string[], receivedAt: number) => parseAppended(raw, flags, receivedAt, deps.hostname),
  };
}
export type Mailstore = ReturnType<typeof createMailstore>;

/**
 * A message stored as given (APPEND, imports) parsed into the fields the REST face shows, and
 * IMAP's summary of it; one without a Message-ID gets one made up on `hostname`.
 */
export async function parseAppended(raw: Buffer, flags: string[], receivedAt: number, hostname: string, messageId?: string): Promise<AppendInput> {
  const m = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  const list = (a: AddressObject | AddressObject[] | undefined) => (a ? (Array.isArray(a) ? a : [a]).flatMap((x) => x.value) : []);
  const from = list(m.from)[0];
  const headers: Record<string, string | string[]> = {};
  for (const line of m.headerLines) {
    const prev = headers[line.key];
    const value = line.line.slice(line.line.indexOf(':') + 1).trim();
    headers[line.key] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value];
  }
  // The text as ingest stores it: NUL and lone surrogates as U+FFFD (PostgreSQL refuses them).
  return {
    raw, flags, receivedAt, imap: imapSummary(raw), hasAttachments: m.attachments.length > 0,
    ...safeStrings({
      messageId: m.messageId ?? messageId ?? `<${randomUUID()}@${hostname}>`,
      fromEmail: from?.address ?? '',
      fromName: from?.name || null,
      toEmail: list(m.to).map((a) => a.address ?? '').filter(Boolean).join(', '),
      subject: m.subject ?? '',
      cc: list(m.cc).map((a) => a.address ?? '').filter(Boolean),
      bcc: list(m.bcc).map((a) => a.address ?? '').filter(Boolean),
      headers,
      bodyText: m.text ?? null,
      bodyHtml: typeof m.html === 'string' ? m.html : null,
    }),
  };
}
