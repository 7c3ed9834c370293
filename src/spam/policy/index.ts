import type { Registry } from 'prom-client';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { countSpamVerdict } from '../metrics.js';
import { createAuthenticator } from '../../mailauth/verify.js';
import { cachedLookup, createPromiseResolver } from '../../mailauth/dns.js';
import { DNSBL_LISTED, RSPAMD_DEFER, RSPAMD_REJECT } from '../../smtp-replies.js';
import { createDmarcGate, type DmarcOutcome } from './dmarc.js';
import { createDnsbl } from './dnsbl.js';
import { createRspamdCheck } from './rspamd.js';
import type { AllowedSender, CountRejected, MessageDecision, PreAcceptancePolicy } from './types.js';

/** What the policy is built from; `allowedSender` is the spam filter's allow lists (none when left out). */
export interface SpamPolicyDeps {
  config: Readonly<Config>;
  logger: Logger;
  registry: Registry;
  allowedSender?: AllowedSender;
  countRejected?: CountRejected;
}

const POSTMASTER = /^postmaster@/i;
/** How long the pre-acceptance verification of one message may take (then it is taken: a temporary error is no fail). */
const DMARC_VERIFY_MS = 10_000;
/** Until the spam filter's allow lists are wired in: no sender is allow-listed. */
const NO_ALLOW_LIST: AllowedSender = async () => false;

/** Refusals counted as the verdict `rejected` of the spam filter's counter (mailstead_spam_verdicts_total). */
const rejectedCounter = (registry: Registry): CountRejected => () => countSpamVerdict(registry, 'rejected');

/**
 * The spam policy before the 250 (DECISIONS.md section 18): DNSBL zones at RCPT (postmaster@
 * exempt), DMARC p=reject at the end of DATA, and with MAILSTEAD_SPAM_FILTER=rspamd rspamd's
 * verdict (its reject and defer actions refuse; the rest travels with the message to the classify
 * step as `spam.rspamd`). Built even when it checks nothing, so the listener has one path.
 */
export function createSpamPolicy(deps: SpamPolicyDeps): PreAcceptancePolicy {
  const { config } = deps;
  const countRejected = deps.countRejected ?? rejectedCounter(deps.registry);
  const resolver = createPromiseResolver(config.dnsServers);
  const dnsbl = createDnsbl({ zones: config.dnsblZones, lookup: (name) => resolver.resolve4(name) });
  const dmarc = createDmarcGate({
    lookup: cachedLookup((name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>),
    authenticate: createAuthenticator({ hostname: config.hostname, dnsServers: config.dnsServers, logger: deps.logger, timeoutMs: DMARC_VERIFY_MS }),
    allowedSender: deps.allowedSender ?? NO_ALLOW_LIST,
    logger: deps.logger,
  });
  const rspamd = config.spamFilter === 'rspamd' ? createRspamdCheck({ url: config.rspamdUrl, logger: deps.logger }) : null;

  return {
    connected(remoteAddress) {
      if (dnsbl.enabled) void dnsbl.listedIn(remoteAddress);
    },

    async recipient({ remoteAddress, address }) {
      // RFC 5321 section 4.5.1: a listed sender can still reach a human about the listing.
      if (!dnsbl.enabled || POSTMASTER.test(address)) return null;
      const zone = await dnsbl.listedIn(remoteAddress);
      if (!zone) return null;
      countRejected('dnsbl');
      deps.logger.info({ ip: remoteAddress, zone }, 'smtp client listed by a DNSBL');
      return DNSBL_LISTED(zone);
    },

    async message(delivery, facts): Promise<MessageDecision> {
      // Both asked at once: rspamd's answer is not worth waiting for after a DMARC refusal, nor before it.
      const [gate, outcome] = await Promise.all([
        dmarc(delivery).catch((err: unknown) => {
          deps.logger.warn({ err }, 'DMARC policy check failed; the message is taken');
          return {} as DmarcOutcome;
        }),
        rspamd ? rspamd(delivery, facts) : null,
      ]);
      if (gate.refuse) {
        countRejected('dmarc');
        return { refuse: gate.refuse };
      }
      // The results of a verification made here travel with the message: the parser keeps them.
      const verified = gate.auth ? { auth: gate.auth } : {};
      if (!outcome) return gate.auth ? { spam: verified } : {};
      if (outcome === 'unavailable') return { spam: { rspamd: 'unavailable', ...verified } };
      if (outcome.action === 'reject') {
        countRejected('rspamd');
        return { refuse: RSPAMD_REJECT() };
      }
      if (outcome.action === 'defer') return { refuse: RSPAMD_DEFER() };
      return { spam: { rspamd: outcome.verdict, ...verified } };
    },
  };
}
