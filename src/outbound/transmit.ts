import type { RecipientResolver } from '../inbound/types.js';
import type { Ingest } from '../ingest/ports.js';
import { returnPathHeader } from '../smtp/received.js';
import { withoutReturnPath } from '../smtp/return-path.js';
import { localReceived } from './message.js';
import type { SessionPool } from './pool.js';
import type { Router } from './route.js';
import { SessionError, type Hop, type RcptResult } from './transport.js';

/** What became of each recipient of one try, and which MX took part (for a DSN's Remote-MTA). */
export interface TryResult {
  results: RcptResult[];
  /** Enhanced status for permanent results decided before any remote spoke (null MX, refused MX). */
  status?: string;
  remoteMta?: string;
}

/** Whether a session broke in its TLS handshake (nodemailer reports it as ETLS, or as a socket error from OpenSSL). */
const tlsFailure = (err: SessionError) => err.code === 'ETLS' || /\b(ssl|tls)\b|ssl3_|handshake/i.test(err.message);

const all = (to: string[], outcome: RcptResult['outcome'], response: string): RcptResult[] => to.map((rcpt) => ({ rcpt, outcome, response }));

/**
 * Sends one message to recipients at one remote domain: the planned MX addresses in order, the
 * next one only when a session could not be had or broke before the message's fate was known; an
 * opportunistic STARTTLS whose handshake fails is retried at once in plaintext (as Postfix does at
 * security level "may"). The first address that answers about the message decides.
 */
export function createRemoteTransmitter(deps: { route: Router; pool: SessionPool }) {
  async function attemptOn(hop: Hop, fresh: boolean, from: string, to: string[], raw: Buffer): Promise<{ results: RcptResult[] } | { failed: SessionError; reused: boolean }> {
    const session = await deps.pool.acquire(hop, { fresh });
    const reused = session.reused;
    let ok = false;
    try {
      const results = await session.send(from, to, raw);
      ok = true;
      return { results };
    } catch (err) {
      if (!(err instanceof SessionError)) throw err;
      return { failed: err, reused };
    } finally {
      deps.pool.release(session, ok);
    }
  }

  /**
   * One transaction at `hop`. A reused session goes straight to MAIL (no RSET to probe it first),
   * so one the remote closed while it sat idle breaks at once: the message then goes over a new
   * session to the same address, as it would have after a failed RSET.
   */
  async function attempt(hop: Hop, from: string, to: string[], raw: Buffer): Promise<RcptResult[]> {
    let tried = await attemptOn(hop, false, from, to, raw);
    if ('failed' in tried && tried.reused) tried = await attemptOn(hop, true, from, to, raw);
    if ('failed' in tried) throw tried.failed;
    return tried.results;
  }

  return async (domain: string, from: string, to: string[], raw: Buffer): Promise<TryResult> => {
    const plan = await deps.route(domain);
    if (plan.kind === 'permanent') return { results: all(to, 'permanent', plan.response), status: plan.status };
    if (plan.kind === 'temporary') return { results: all(to, 'temporary', plan.response) };
    let last = `no MX host of ${domain} could be reached`;
    for (const hop of plan.hops) {
      try {
        return { results: await attempt(hop, from, to, raw), remoteMta: hop.host };
      } catch (err) {
        if (!(err instanceof SessionError)) throw err;
        last = err.message;
        if (hop.tls === 'opportunistic' && tlsFailure(err)) {
          try {
            return { results: await attempt({ ...hop, tls: 'none' }, from, to, raw), remoteMta: hop.host };
          } catch (again) {
            if (!(again instanceof SessionError)) throw again;
            last = again.message;
          }
        }
      }
    }
    return { results: all(to, 'temporary', last) };
  };
}
export type RemoteTransmitter = ReturnType<typeof createRemoteTransmitter>;

/**
 * Delivers one message to recipients at a domain we host, through ingest like mail arriving over
 * SMTP (aliases, forwards, SRS bounces, webhooks all apply), with a Received: header of its own so
 * that a loop between forwarders counts its hops. A recipient nobody hosts fails for good (5.1.1).
 */
export function createLocalTransmitter(deps: { ingest: Ingest; resolve: RecipientResolver; hostname: string; now: () => number }) {
  /** `ours`: a message this server made (a DSN), delivered like submitted mail: nothing to verify, no spam verdict (DECISIONS.md section 18). */
  return async (itemId: number, from: string, to: string[], raw: Buffer, ours = false): Promise<TryResult> => {
    const results: RcptResult[] = [];
    const recipients: Parameters<Ingest['acceptRaw']>[0]['recipients'] = [];
    for (const rcpt of to) {
      const r = await deps.resolve(rcpt);
      if (r.kind === 'deliver') recipients.push({ address: rcpt, resolution: r });
      else results.push({ rcpt, outcome: 'permanent', response: `550 5.1.1 <${rcpt}>: no such recipient here` });
    }
    if (recipients.length === 0) return { results, remoteMta: deps.hostname };
    const now = deps.now();
    const head = Buffer.from(returnPathHeader(from || null) + localReceived(deps.hostname, recipients.length === 1 ? recipients[0].address : '', itemId, now), 'latin1');
    const message = withoutReturnPath(raw);
    const size = head.length + message.length;
    try {
      await deps.ingest.acceptRaw({
        raw: { chunks: [head, message], length: size }, size, mailFrom: from || null, recipients,
        remoteAddress: '127.0.0.1', heloName: deps.hostname, tls: false, receivedAt: now, ...(ours ? { authenticated: true } : {}),
      });
      for (const r of recipients) results.push({ rcpt: r.address, outcome: 'sent', response: '250 2.0.0 delivered locally' });
    } catch (err) {
      for (const r of recipients) results.push({ rcpt: r.address, outcome: 'temporary', response: `451 4.3.0 local delivery failed: ${(err as Error).message}` });
    }
    return { results, remoteMta: deps.hostname };
  };
}
export type LocalTransmitter = ReturnType<typeof createLocalTransmitter>;
