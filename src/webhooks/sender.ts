import { isIP } from 'node:net';
import type { Agent, buildConnector } from 'undici';
import { ALLOW_PRIVATE_HINT, addressProblem, bareHost, connectLookup, RefusedTargetError } from './guard.js';
import type { HostLookup } from './resolve.js';

/** What one POST came to. `statusCode` is null when no answer arrived (network error, timeout, refusal). */
export interface SendResult {
  statusCode: number | null;
  retryAfter: string | undefined;
  latencyMs: number;
  error: string | null;
  /** The engine is stopping and cut the request short: not an attempt. */
  aborted: boolean;
}

/** Options of the sender; the defaults are DECISIONS.md section 9's. */
export interface SenderOptions {
  lookup: HostLookup;
  allowPrivate: boolean;
  /** Whole-attempt timeout (connect, headers, body). */
  timeoutMs?: number;
  /** Connections per origin; the engine's per-webhook concurrency bound matches it. */
  connectionsPerOrigin: number;
}

const ERROR_EXCERPT = 200;

/** Reads at most a short excerpt of an error answer (for the delivery log) and drops the rest. */
async function excerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += chunk.toString('utf8');
      if (text.length >= ERROR_EXCERPT) break;
    }
  } finally {
    body.destroy();
  }
  return text.slice(0, ERROR_EXCERPT).replace(/\s+/g, ' ').trim();
}

/**
 * Sends webhook POSTs over one shared undici Agent (keep-alive pools per origin). Redirects are
 * never followed (undici does not unless asked). The Agent's connector runs the connect-time half
 * of the SSRF guard: IP literals are checked here, names through the checked lookup.
 */
export function createSender({ lookup, allowPrivate, timeoutMs = 15_000, connectionsPerOrigin }: SenderOptions) {
  /**
   * The Agent, made on the first POST: undici is ~4.5 MB of heap that a server without webhooks
   * (or before its first delivery) does not need to hold.
   */
  let agent: Promise<Agent> | null = null;
  const pool = () => (agent ??= import('undici').then(({ Agent: AgentClass, buildConnector: connector }) => {
    const base = connector({ timeout: timeoutMs, lookup: connectLookup(lookup, allowPrivate) });
    const connect: buildConnector.connector = (opts, callback) => {
      const host = bareHost(opts.hostname);
      if (!allowPrivate && isIP(host)) {
        const problem = addressProblem(host);
        if (problem) { callback(new RefusedTargetError(`${host} is a ${problem} address`), null); return; }
      }
      base(opts, callback);
    };
    return new AgentClass({
      connect,
      connections: connectionsPerOrigin,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      // The sweeper below enforces the whole-attempt deadline; these only back it up.
      headersTimeout: timeoutMs + 1000,
      bodyTimeout: timeoutMs + 1000,
    });
  }));

  // One sweeper for the whole-attempt deadline instead of a timer per request (2,000 requests/s).
  const live = new Map<AbortController, { deadline: number; reason: 'timeout' | 'stop' | null }>();
  const sweeper = setInterval(() => {
    const now = performance.now();
    for (const [c, s] of live) if (s.deadline <= now) { s.reason = 'timeout'; c.abort(); }
  }, Math.min(250, timeoutMs / 4));
  sweeper.unref();

  return {
    /** POSTs `body` to `url`; never throws. */
    async post(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
      const controller = new AbortController();
      const state = { deadline: Infinity, reason: null as 'timeout' | 'stop' | null };
      live.set(controller, state);
      let started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      try {
        const u = new URL(url);
        // The first POST loads undici: that is not the receiver's time, so the attempt's clock starts
        // after it (an abortAll meanwhile has already aborted the signal the request gets).
        const agentReady = await pool();
        started = performance.now();
        state.deadline = started + timeoutMs;
        const res = await agentReady.request({ origin: u.origin, path: u.pathname + u.search, method: 'POST', headers, body, signal: controller.signal });
        const ok = res.statusCode >= 200 && res.statusCode < 300;
        const retryAfter = res.headers['retry-after'];
        let error: string | null = null;
        if (ok) await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        else error = `HTTP ${res.statusCode}` + await excerpt(res.body).then((t) => (t ? `: ${t}` : ''), () => '');
        return { statusCode: res.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, latencyMs: latency(), error, aborted: false };
      } catch (err) {
        return { statusCode: null, retryAfter: undefined, latencyMs: latency(), error: describe(err, state.reason === 'timeout', timeoutMs), aborted: state.reason === 'stop' };
      } finally {
        live.delete(controller);
      }
    },

    /** Cuts every request under way short (engine shutdown); they come back as `aborted`. */
    abortAll(): void {
      for (const [c, s] of live) { s.reason ??= 'stop'; c.abort(); }
    },

    /** Closes every pooled connection. */
    async close(): Promise<void> {
      clearInterval(sweeper);
      if (agent) await (await agent).destroy();
    },
  };
}
export type Sender = ReturnType<typeof createSender>;

/** A short, secret-free description of a failed attempt. */
function describe(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `Timed out after ${timeoutMs / 1000} s`;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e.cause && e.code !== 'EWEBHOOKTARGET' ? e.cause : e;
  if (inner instanceof RefusedTargetError || e.code === 'EWEBHOOKTARGET') return `Refused by the SSRF guard: ${(inner as Error).message} (${ALLOW_PRIVATE_HINT})`;
  const code = inner.code ?? e.code;
  const message = (inner.message ?? e.message ?? 'request failed').slice(0, 300);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
