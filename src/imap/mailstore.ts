import { randomUUID } from 'node:crypto';
import { simpleParser, type AddressObject } from 'mailparser';
import type { EmailFiles } from '../emails/files.js';
import type { AppendInput, FolderMessages } from '../emails/folder-messages.js';
import type { Lockout } from '../mailboxes/lockout.js';
import type { MailboxLogins } from '../mailboxes/logins.js';
import { imapSummary } from './summary.js';

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
    async parseAppend(raw: Buffer, flags: string[], receivedAt: number): Promise<AppendInput> {
      const m = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
      // Text columns hold no NUL (PostgreSQL refuses it); the bytes keep theirs (BINARY APPEND, RFC 3516).
      const text = <T extends string | null | undefined>(v: T): T => (typeof v === 'string' ? v.replaceAll('\0', '\uFFFD') : v) as T;
      const list = (a: AddressObject | AddressObject[] | undefined) => (a ? (Array.isArray(a) ? a : [a]).flatMap((x) => x.value) : []);
      const from = list(m.from)[0];
      const headers: Record<string, string | string[]> = {};
      for (const line of m.headerLines) {
        const prev = headers[line.key];
        const value = text(line.line.slice(line.line.indexOf(':') + 1).trim());
        headers[line.key] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value];
      }
      return {
        raw, flags, receivedAt, imap: imapSummary(raw),
        messageId: m.messageId ?? `<${randomUUID()}@${deps.hostname}>`,
        fromEmail: from?.address ?? '',
        fromName: text(from?.name || null),
        toEmail: list(m.to).map((a) => a.address ?? '').filter(Boolean).join(', '),
        subject: text(m.subject ?? ''),
        cc: list(m.cc).map((a) => a.address ?? '').filter(Boolean),
        bcc: list(m.bcc).map((a) => a.address ?? '').filter(Boolean),
        headers,
        bodyText: text(m.text ?? null),
        bodyHtml: typeof m.html === 'string' ? text(m.html) : null,
        hasAttachments: m.attachments.length > 0,
      };
    },
  };
}
export type Mailstore = ReturnType<typeof createMailstore>;
