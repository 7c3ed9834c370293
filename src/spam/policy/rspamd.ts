import { createReadStream } from 'node:fs';
import { request } from 'undici';
import type { RawDelivery } from '../../inbound/types.js';
import type { Logger } from '../../logger.js';
import type { SpamReason, SpamVerdict } from '../../inbound/spam-verdict.js';

/** rspamd's answer counts only if it comes within this time (DECISIONS.md section 18); then the builtin verdict applies. */
export const RSPAMD_TIMEOUT_MS = 5_000;

/** What rspamd decided about one message, as the SMTP side acts on it. */
export type RspamdOutcome =
  | { action: 'reject' | 'defer' | 'junk' | 'ham'; verdict: SpamVerdict }
  | 'unavailable';

/** The parts of /checkv2's JSON answer that we read. */
interface CheckReply {
  action?: unknown;
  score?: unknown;
  required_score?: unknown;
  symbols?: Record<string, { name?: string; score?: number; options?: unknown[] }>;
}

/** rspamd's action names, mapped as section 18 says. */
const ACTIONS: Record<string, 'reject' | 'defer' | 'junk' | 'ham'> = {
  'reject': 'reject',
  'soft reject': 'defer',
  'greylist': 'defer',
  'add header': 'junk',
  'rewrite subject': 'junk',
  'no action': 'ham',
};

/** The symbols that moved the score, largest first, as reasons (rspamd already names them in capitals). */
export function reasonsOf(symbols: CheckReply['symbols']): SpamReason[] {
  const reasons: SpamReason[] = [];
  for (const [key, s] of Object.entries(symbols ?? {})) {
    const score = Number(s?.score ?? 0);
    if (!Number.isFinite(score) || score === 0) continue;
    const options = Array.isArray(s.options) ? s.options.filter((o) => typeof o === 'string').join(', ') : '';
    reasons.push({ rule: String(s.name ?? key), score: Math.round(score * 1000) / 1000, ...(options ? { detail: options.slice(0, 200) } : {}) });
  }
  return reasons.sort((a, b) => Math.abs(b.score) - Math.abs(a.score) || a.rule.localeCompare(b.rule));
}

/** Reads /checkv2's answer; null when it is not one we understand. */
export function outcomeOf(reply: CheckReply): Exclude<RspamdOutcome, 'unavailable'> | null {
  const action = typeof reply.action === 'string' ? ACTIONS[reply.action] : undefined;
  const score = Number(reply.score);
  const threshold = Number(reply.required_score);
  if (!action || !Number.isFinite(score) || !Number.isFinite(threshold)) return null;
  const verdict: SpamVerdict = {
    // A refused message is never stored; a deferred one comes again. Either way it is spam to rspamd.
    verdict: action === 'ham' ? 'ham' : 'junk',
    score: Math.round(score * 1000) / 1000,
    threshold,
    filter: 'rspamd',
    reasons: reasonsOf(reply.symbols),
  };
  return { action, verdict };
}

/** The envelope facts rspamd is told besides the message. */
export interface CheckFacts {
  queueId: string;
  /** The client's name from reverse DNS, when it has one. */
  clientHostname: string | null;
}

/**
 * The rspamd adapter before the 250 (MAILSTEAD_SPAM_FILTER=rspamd): POSTs the message to
 * `${url}/checkv2` with the envelope as rspamd's headers (IP, Helo, From, Rcpt, Hostname,
 * Queue-Id) and reads its action. Any failure (refused connection, an error status, an answer we
 * cannot read, no answer within RSPAMD_TIMEOUT_MS) is 'unavailable': never a lost or refused message.
 */
export function createRspamdCheck({ url, logger, timeoutMs = RSPAMD_TIMEOUT_MS }: { url: string; logger: Logger; timeoutMs?: number }) {
  const endpoint = new URL('checkv2', url.endsWith('/') ? url : `${url}/`);
  return async (delivery: RawDelivery, facts: CheckFacts): Promise<RspamdOutcome> => {
    const headers: Array<[string, string]> = [
      ['IP', delivery.remoteAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')],
      ['Queue-Id', facts.queueId],
    ];
    if (delivery.heloName) headers.push(['Helo', delivery.heloName]);
    if (delivery.mailFrom) headers.push(['From', delivery.mailFrom]);
    if (facts.clientHostname) headers.push(['Hostname', facts.clientHostname]);
    for (const r of delivery.recipients) headers.push(['Rcpt', r.address]);
    const body = 'chunks' in delivery.raw ? Buffer.concat(delivery.raw.chunks, delivery.raw.length) : createReadStream(delivery.raw.path);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(endpoint, { method: 'POST', headers: headers.flat(), body, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      const text = await res.body.text();
      if (res.statusCode !== 200) {
        logger.warn({ status: res.statusCode }, 'rspamd check failed; the builtin verdict applies');
        return 'unavailable';
      }
      const outcome = outcomeOf(JSON.parse(text) as CheckReply);
      if (!outcome) logger.warn('rspamd answered something we cannot read; the builtin verdict applies');
      return outcome ?? 'unavailable';
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'rspamd unavailable; the builtin verdict applies');
      return 'unavailable';
    } finally {
      if (!Buffer.isBuffer(body)) body.destroy();
    }
  };
}
export type RspamdCheck = ReturnType<typeof createRspamdCheck>;

/**
 * Training through rspamd's controller (`/learnspam`, `/learnham`, the Password header), the
 * trainer the spam filter calls when users move mail into or out of Junk. rspamd answering that
 * it has already learned the message this way (208, or 404 "already learned" in 3.x) is success;
 * learning it the other way makes rspamd replace the earlier learning. Rejects on any other failure.
 */
export function createRspamdTrainer(config: { rspamdControllerUrl: string; rspamdPassword: string; timeoutMs?: number }) {
  const base = config.rspamdControllerUrl.endsWith('/') ? config.rspamdControllerUrl : `${config.rspamdControllerUrl}/`;
  const timeoutMs = config.timeoutMs ?? 30_000;
  return {
    async train(raw: Buffer, as: 'spam' | 'ham'): Promise<void> {
      const headers: Record<string, string> = {};
      if (config.rspamdPassword) headers.Password = config.rspamdPassword;
      const res = await request(new URL(as === 'spam' ? 'learnspam' : 'learnham', base), {
        method: 'POST', headers, body: raw, signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.body.text();
      if (res.statusCode === 200 || res.statusCode === 208) return;
      // rspamd 3.x answers 404 "<id> has been already learned as spam, ignore it" for a repeat.
      if (res.statusCode === 404 && /already learned/i.test(text)) return;
      // The answer names the problem (wrong password, no classifier); the password is never in it.
      throw new Error(`rspamd /learn${as} answered ${res.statusCode}: ${text.slice(0, 200)}`);
    },
  };
}
export type RspamdTrainer = ReturnType<typeof createRspamdTrainer>;
