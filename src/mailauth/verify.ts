import { createReadStream } from 'node:fs';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import type { DKIMResult, DMARCResult, SPFResult } from 'mailauth';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { dmarc } from 'mailauth/lib/dmarc/index.js';
import { spf } from 'mailauth/lib/spf/index.js';
import addressparser from 'nodemailer/lib/addressparser';
import type { AuthResults } from '../message/auth-results.js';
import type { Logger } from '../logger.js';
import { cachedLookup, createPromiseResolver } from './dns.js';
import { headerEnd, splitHeaderBlock } from '../message/headers.js';

/** The SMTP envelope facts that SPF and DMARC judge a message by. */
export interface AuthEnvelope {
  remoteAddress: string;
  heloName: string;
  mailFrom: string | null;
}

/** Options of the authenticator; `timeoutMs` bounds the whole verification of one message. */
export interface AuthenticatorOptions {
  hostname: string;
  dnsServers: readonly string[];
  logger: Logger;
  timeoutMs?: number;
}

/** What is stored when verification could not finish (DNS down, timeout): a temporary error, not a verdict. */
export const TEMPERROR_RESULTS: AuthResults = {
  spf: { result: 'temperror', domain: null },
  dkim: { result: 'temperror', domains: [] },
  dmarc: { result: 'temperror', policy: null },
};

/** How long an SPF or DMARC verdict is reused for the same inputs (their DNS answers are cached longer). */
export const VERDICT_CACHE_MS = 5_000;
const VERDICT_CACHE_ENTRIES = 10_000;

const plainIp = (ip: string) => ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

/** The stored, API-facing shape of mailauth's verdicts: one overall result per check plus the details that explain it. */
export function summarize(res: { dkim: DKIMResult[]; spf: SPFResult | null; dmarc: DMARCResult | false }): AuthResults {
  const spfResult = res.spf
    ? { result: res.spf.status.result, domain: res.spf.domain ?? null, client_ip: res.spf['client-ip'] ?? null, helo: res.spf.helo ?? null, comment: res.spf.status.comment ?? null }
    : { result: 'none', domain: null };
  // An unsigned message has one placeholder result without a signing domain: no signature to list.
  const signatures = res.dkim.filter((r) => !!r.signingDomain).map((r) => ({
    domain: r.signingDomain,
    selector: r.selector ?? null,
    result: r.status.result,
    aligned: r.status.aligned ?? null,
    comment: r.status.comment ?? null,
  }));
  const passing = signatures.filter((s) => s.result === 'pass');
  const dkimResult = passing.length > 0 ? 'pass' : signatures[0]?.result ?? res.dkim[0]?.status.result ?? 'none';
  const dkim = { result: dkimResult, domains: passing.map((s) => s.domain), signatures };
  const dmarcResult = res.dmarc
    ? { result: res.dmarc.status.result, policy: res.dmarc.policy ?? null, domain: res.dmarc.domain ?? null }
    : { result: 'none', policy: null, domain: null };
  return { spf: spfResult, dkim, dmarc: dmarcResult };
}

/**
 * The From addresses of a header block that carries nothing DKIM (or ARC) would verify, read the
 * way mailauth reads them; null when the block is incomplete or signed, so mailauth reads it whole.
 */
export function unsignedHeaderFrom(head: Buffer): string[] | null {
  const end = headerEnd(head);
  if (!end) return null;
  const block = head.subarray(0, end.headEnd);
  const { lines, consumed } = splitHeaderBlock(block);
  // A line we could not read as a header: mailauth may read it differently, so it reads the message.
  if (consumed < block.length) return null;
  if (lines.some((l) => l.key === 'dkim-signature' || l.key.startsWith('arc-'))) return null;
  const from: string[] = [];
  for (const l of lines) {
    if (l.key !== 'from') continue;
    const value = Buffer.from(l.line, 'latin1').toString('utf8');
    const colon = value.indexOf(':');
    for (const a of addressparser(value.slice(colon + 1).trim()) as Array<{ address?: string }>) if (a?.address) from.push(a.address);
  }
  return from;
}

/** A bounded map of promised answers that expire after VERDICT_CACHE_MS. */
function verdictCache<T>() {
  const entries = new Map<string, { until: number; value: Promise<T> }>();
  return (key: string, compute: () => Promise<T>): Promise<T> => {
    const hit = entries.get(key);
    const now = Date.now();
    if (hit && hit.until > now) return hit.value;
    if (entries.size >= VERDICT_CACHE_ENTRIES) entries.delete(entries.keys().next().value as string);
    const value = compute();
    entries.set(key, { until: now + VERDICT_CACHE_MS, value });
    // A failed verification is not kept: the next message asks again.
    value.catch(() => entries.delete(key));
    return value;
  };
}

/**
 * SPF, DKIM and DMARC verification with mailauth over MAILSTEAD_DNS_SERVERS: the steps of mailauth's
 * `authenticate` without ARC and BIMI, which we do not report. A message without a DKIM-Signature
 * is not streamed through the DKIM verifier (its verdict is `none` by definition), and SPF and
 * DMARC verdicts are reused for VERDICT_CACHE_MS for identical inputs: a busy sender's mail then
 * costs a header scan instead of three verifications. Never throws: a DNS failure gives mailauth's
 * own `temperror`, and a verification that runs past `timeoutMs` gives TEMPERROR_RESULTS, so a slow
 * resolver delays a message's storage by a bounded time at most.
 */
export function createAuthenticator({ hostname, dnsServers, logger, timeoutMs = 15_000 }: AuthenticatorOptions) {
  const dns = createPromiseResolver(dnsServers);
  const resolver = cachedLookup((name, rrtype) => dns.resolve(name, rrtype) as Promise<string[][] | string[]>);
  const spfVerdicts = verdictCache<SPFResult>();
  const dmarcVerdicts = verdictCache<DMARCResult | false>();

  /** `opened` keeps the file stream of a spooled message, so a timeout can close it. */
  async function verify(input: Buffer | { path: string }, head: Buffer | null, env: AuthEnvelope, opened: { stream?: Readable }) {
    const ip = plainIp(env.remoteAddress);
    const sender = env.mailFrom ?? '';
    const unsignedFrom = head ? unsignedHeaderFrom(head) : null;
    let dkim: DKIMResult[];
    let headerFrom: string[];
    if (unsignedFrom) {
      dkim = [];
      headerFrom = unsignedFrom;
    } else {
      // A spooled message is read from its file only when its signatures are verified.
      const source = Buffer.isBuffer(input) ? input : (opened.stream = createReadStream(input.path));
      const verified = await dkimVerify(source, { resolver, sender });
      dkim = verified.results;
      headerFrom = verified.headerFrom;
    }
    let helo = env.heloName || ip;
    // mailauth's form for an address literal.
    if (isIP(helo)) helo = `[${helo}]`;
    const spfResult = await spfVerdicts(`${ip}\n${helo}\n${sender}`, () => spf({ ip, helo, sender, mta: hostname, resolver }));
    let dmarcResult: DMARCResult | false = false;
    if (headerFrom.length > 0) {
      const spfDomains = spfResult?.status.result === 'pass' && spfResult.domain ? [spfResult.domain] : [];
      const dkimDomains = dkim.filter((r) => r.status.result === 'pass')
        .map((r) => ({ id: r.id, domain: r.signingDomain, aligned: r.status.aligned, underSized: r.status.underSized }));
      dmarcResult = await dmarcVerdicts(JSON.stringify([headerFrom, spfDomains, dkimDomains]), () => dmarc({ headerFrom, spfDomains, dkimDomains, resolver }));
    }
    return summarize({ dkim, spf: spfResult, dmarc: dmarcResult });
  }

  return async (input: Buffer | { path: string }, env: AuthEnvelope, head: Buffer | null = null): Promise<AuthResults> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), timeoutMs); });
    const opened: { stream?: Readable } = {};
    try {
      const result = await Promise.race([verify(input, head, env, opened), timeout]);
      if (!result) {
        opened.stream?.destroy();
        return TEMPERROR_RESULTS;
      }
      return result;
    } catch (err) {
      logger.warn({ err }, 'mail authentication failed');
      return TEMPERROR_RESULTS;
    } finally {
      clearTimeout(timer);
    }
  };
}
/** Verifies one message (bytes, or the path of its spool file); `head` (its first bytes) lets an unsigned message skip the DKIM verifier. */
export type Authenticator = ReturnType<typeof createAuthenticator>;
