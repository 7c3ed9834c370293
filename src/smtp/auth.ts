import type { Readable } from 'node:stream';
import { authenticate, type AuthenticateResult } from 'mailauth';
import type { AuthResults } from '../ingest/types.js';
import type { Logger } from '../logger.js';
import { cachedLookup, createPromiseResolver } from './dns.js';

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

const plainIp = (ip: string) => ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

/** The stored, API-facing shape of mailauth's verdicts: one overall result per check plus the details that explain it. */
export function summarize(res: AuthenticateResult): AuthResults {
  const spf = res.spf
    ? { result: res.spf.status.result, domain: res.spf.domain ?? null, client_ip: res.spf['client-ip'] ?? null, helo: res.spf.helo ?? null, comment: res.spf.status.comment ?? null }
    : { result: 'none', domain: null };
  const results = res.dkim?.results ?? [];
  // An unsigned message has one placeholder result without a signing domain: no signature to list.
  const signatures = results.filter((r) => !!r.signingDomain).map((r) => ({
    domain: r.signingDomain,
    selector: r.selector ?? null,
    result: r.status.result,
    aligned: r.status.aligned ?? null,
    comment: r.status.comment ?? null,
  }));
  const passing = signatures.filter((s) => s.result === 'pass');
  const dkimResult = passing.length > 0 ? 'pass' : signatures[0]?.result ?? results[0]?.status.result ?? 'none';
  const dkim = { result: dkimResult, domains: passing.map((s) => s.domain), signatures };
  const dmarc = res.dmarc
    ? { result: res.dmarc.status.result, policy: res.dmarc.policy ?? null, domain: res.dmarc.domain ?? null }
    : { result: 'none', policy: null, domain: null };
  return { spf, dkim, dmarc };
}

/**
 * SPF, DKIM and DMARC verification with mailauth over MAILSTEAD_DNS_SERVERS. Never throws: a DNS
 * failure gives mailauth's own `temperror`, and a verification that runs past `timeoutMs` gives
 * TEMPERROR_RESULTS, so a slow resolver delays a message's storage by a bounded time at most.
 */
export function createAuthenticator({ hostname, dnsServers, logger, timeoutMs = 15_000 }: AuthenticatorOptions) {
  const dns = createPromiseResolver(dnsServers);
  const resolver = cachedLookup((name, rrtype) => dns.resolve(name, rrtype) as Promise<string[][] | string[]>);
  return async (input: Buffer | Readable, env: AuthEnvelope): Promise<AuthResults> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), timeoutMs); });
    try {
      const ip = plainIp(env.remoteAddress);
      const result = await Promise.race([
        authenticate(input, {
          ip,
          helo: env.heloName || ip,
          sender: env.mailFrom ?? '',
          mta: hostname,
          resolver,
          disableArc: true,
          disableBimi: true,
        }),
        timeout,
      ]);
      if (!result) {
        if (typeof (input as Readable).destroy === 'function') (input as Readable).destroy();
        return TEMPERROR_RESULTS;
      }
      return summarize(result);
    } catch (err) {
      logger.warn({ err }, 'mail authentication failed');
      return TEMPERROR_RESULTS;
    } finally {
      clearTimeout(timer);
    }
  };
}
/** Verifies one message. */
export type Authenticator = ReturnType<typeof createAuthenticator>;
