import { open } from 'node:fs/promises';
import { domainToASCII } from 'node:url';
import getDmarcRecord from 'mailauth/lib/dmarc/get-dmarc-record.js';
import addressparser from 'nodemailer/lib/addressparser';
import type { AuthResults, RawDelivery } from '../../inbound/types.js';
import type { Logger } from '../../logger.js';
import type { Authenticator } from '../../mailauth/verify.js';
import type { DnsLookup } from '../../mailauth/dns.js';
import { headerEnd, splitHeaderBlock } from '../../message/headers.js';
import { DMARC_REJECT, type SmtpReply } from '../../smtp-replies.js';
import type { AllowedSender } from './types.js';

/** Bytes read from the front of a spooled message to find its header block. */
const HEAD_BYTES = 64 * 1024;

/** The first bytes of a delivery's raw message (its header block, when it has one). */
async function headOf(raw: RawDelivery['raw']): Promise<Buffer> {
  if ('chunks' in raw) return Buffer.concat(raw.chunks, raw.length).subarray(0, HEAD_BYTES);
  const file = await open(raw.path, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await file.read(buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/** The addresses of the top header block's From fields, as mailauth's DMARC check reads them. */
export function headerFromAddresses(head: Buffer): string[] {
  const end = headerEnd(head);
  const { lines } = splitHeaderBlock(end ? head.subarray(0, end.headEnd) : head);
  const from: string[] = [];
  for (const l of lines) {
    if (l.key !== 'from') continue;
    const value = Buffer.from(l.line, 'latin1').toString('utf8');
    for (const a of addressparser(value.slice(value.indexOf(':') + 1).trim()) as Array<{ address?: string }>) if (a?.address) from.push(a.address);
  }
  return from;
}

/** The policy that applies to mail from `domain` (mailauth's reading: `sp` when the record is the organisational domain's). */
export function appliedPolicy(record: { p?: string; sp?: string; isOrgRecord: boolean }): string {
  return String((record.isOrgRecord && record.sp ? record.sp : record.p) ?? 'none').trim().toLowerCase();
}

/**
 * DMARC p=reject enforced at the end of DATA (DECISIONS.md section 18). Cheap first: the From
 * domain's DMARC record is looked up (cached DNS), and only when the policy that applies to it is
 * reject does the message go through SPF, DKIM and DMARC verification before the 250. A `fail`
 * then refuses it with 550 5.7.1 naming DMARC, unless the From address is on an allow list of a
 * recipient's tenant. Anything that cannot be decided (no single From, DNS failures, a temporary
 * error, a `pct` below 100, which asks for the policy on a sample only) lets the message through:
 * the stored authentication results still tell the filter. A message verified and taken keeps its
 * results (`auth`): the parser stores them instead of verifying the message a second time.
 */
export function createDmarcGate({ lookup, authenticate, allowedSender, logger }: {
  lookup: DnsLookup; authenticate: Authenticator; allowedSender: AllowedSender; logger: Logger;
}) {
  return async (delivery: RawDelivery): Promise<DmarcOutcome> => {
    const head = await headOf(delivery.raw);
    const from = headerFromAddresses(head);
    if (from.length !== 1) return {};
    const at = from[0].lastIndexOf('@');
    const domain = domainToASCII(from[0].slice(at + 1).trim().toLowerCase());
    if (at < 0 || !domain) return {};
    const record = await getDmarcRecord(domain, lookup).catch(() => false as const);
    if (!record || appliedPolicy(record) !== 'reject') return {};
    if (record.pct !== undefined && Number(record.pct) < 100) return {};
    const input = 'chunks' in delivery.raw ? Buffer.concat(delivery.raw.chunks, delivery.raw.length) : { path: delivery.raw.path };
    const results = await authenticate(input, { remoteAddress: delivery.remoteAddress, heloName: delivery.heloName, mailFrom: delivery.mailFrom }, head);
    // A temporary error may clear by the time the message is parsed: only a decided verification is kept.
    const auth = results.dmarc?.result === 'temperror' ? {} : { auth: results };
    if (results.dmarc?.result !== 'fail') return auth;
    const tenantIds = [...new Set(delivery.recipients.map((r) => r.resolution.tenantId))];
    if (await allowedSender(tenantIds, from[0]).catch(() => false)) return auth;
    logger.info({ domain, ip: delivery.remoteAddress }, 'smtp message refused by DMARC p=reject');
    return { refuse: DMARC_REJECT(domain) };
  };
}
export type DmarcGate = ReturnType<typeof createDmarcGate>;

/** The gate's answer: a refusal, or the message taken, with the results when it was verified. */
export interface DmarcOutcome {
  refuse?: SmtpReply;
  auth?: AuthResults;
}
