import type { AuthResults } from '../inbound/types.js';

/** Most `Received:` headers a forwarded message may carry (ours included) before it counts as looping. */
export const MAX_RECEIVED = 30;

/** The header section of a message (up to and including the blank line), or the whole of it when it has no body. */
export function headerSection(raw: Buffer): Buffer {
  const end = raw.indexOf('\r\n\r\n');
  if (end >= 0) return raw.subarray(0, end + 4);
  const lf = raw.indexOf('\n\n');
  return lf >= 0 ? raw.subarray(0, lf + 2) : raw;
}

/** How many `Received:` header fields the message carries. */
export function countReceived(raw: Buffer): number {
  const head = headerSection(raw).toString('latin1');
  return (head.match(/^received[ \t]*:/gim) ?? []).length;
}

/** Whether inbound checks found DMARC `fail` under a `p=reject` policy (such mail is not forwarded). */
export function dmarcRejects(auth: AuthResults | null): boolean {
  return !!auth?.dmarc && auth.dmarc.result === 'fail' && auth.dmarc.policy === 'reject';
}

const token = (s: unknown) => String(s ?? '').replace(/[^\x21-\x7e]|[;()\\"]/g, '');

/**
 * The body of the Authentication-Results our inbound checks gave (RFC 8601 resinfo, without the
 * authserv-id), for the ARC-Authentication-Results of a forwarded copy.
 */
export function authResultsText(auth: AuthResults | null): string {
  if (!auth) return 'none';
  const parts: string[] = [];
  if (auth.spf) parts.push(`spf=${token(auth.spf.result)}${auth.spf.domain ? ` smtp.mailfrom=${token(auth.spf.domain)}` : ''}`);
  if (auth.dkim) {
    const domains = auth.dkim.domains ?? [];
    parts.push(domains.length ? domains.map((d) => `dkim=${token(auth.dkim!.result)} header.d=${token(d)}`).join(';\r\n\t') : `dkim=${token(auth.dkim.result)}`);
  }
  if (auth.dmarc) {
    const from = (auth.dmarc as { domain?: string | null }).domain;
    parts.push(`dmarc=${token(auth.dmarc.result)}${from ? ` header.from=${token(from)}` : ''}`);
  }
  return parts.length ? parts.join(';\r\n\t') : 'none';
}

/** The enhanced status code (RFC 3463) a reply carries, or the generic one of its class. */
export function statusOf(response: string, permanent: boolean): string {
  const m = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(response);
  if (m && m[1][0] === (permanent ? '5' : '4')) return m[1];
  return permanent ? '5.0.0' : '4.4.7';
}

/** A Received: header for mail this server hands to itself (local delivery of outbound items). */
export function localReceived(hostname: string, rcpt: string, id: number, now: number): string {
  const date = new Date(now).toUTCString().replace(/GMT$/, '+0000');
  const forClause = rcpt ? `for <${rcpt.replace(/[<>\s]/g, '')}>; ` : '';
  return `Received: by ${hostname} (Mailstead) with local id out${id}\r\n\t${forClause}${date}\r\n`;
}
