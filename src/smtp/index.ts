import { readdir, unlink } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Core } from '../core.js';
import { databaseFile } from '../db/connection.js';
import type { QueuedRawParser, RawParser, RecipientResolver } from '../inbound/types.js';
import type { Ingest } from '../ingest/ports.js';
import type { CertificateSource } from '../tls/index.js';
import type { PreAcceptancePolicy } from '../spam/policy/types.js';
import { cachedQuota, cachedResolver } from './cache.js';
import { createParserPool } from './parse-pool.js';
import { createRecipientCheck } from './recipients.js';
import { createSmtpListener, DEFAULT_LIMITS, type ListenerLimits } from './server.js';

/** What the SMTP capability is built on: the recipient resolver (aliases), the ingestion path (emails) and the certificate (tls). */
export interface SmtpDeps {
  resolve: RecipientResolver;
  ingest: Ingest;
  tls: CertificateSource;
  /** Spam policy before the 250 (src/spam/policy); none in listeners that need no policy. */
  policy?: PreAcceptancePolicy;
}

/**
 * Parser threads by default: one core stays with the SMTP and HTTP event loop, the others parse.
 * Running from the TypeScript sources (tsx: development and tests) parses in-process instead,
 * because a thread would first have to compile the parser's sources again.
 */
function defaultParserThreads(): number {
  if (import.meta.url.endsWith('.ts')) return 0;
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** The RawParser: a pool of `threads` parser threads, or in-process parsing when 0. */
function createParsing(core: Core, threads: number): { parse: RawParser; parseQueued?: QueuedRawParser; close(): Promise<void> } {
  const { config, logger } = core;
  if (threads > 0) {
    return createParserPool({ dataDir: config.dataDir, databaseFile: databaseFile(config.dataDir), hostname: config.hostname, dnsServers: [...config.dnsServers], logLevel: config.logLevel, logger, threads, timeoutMs: 120_000, idleMs: 10_000,
      // One thread stays up once started: a cold start costs the next message 100-800 ms before it
      // is listed or announced to IDLE (docs/PERFORMANCE.md, IMAP), and mail often comes after a lull.
      keepWarm: 1 });
  }
  let inProcess: Promise<RawParser> | null = null;
  const parse: RawParser = async (raw, delivery) => {
    inProcess ??= import('./parser-stack.js').then((m) => m.createParserStack({
      hostname: config.hostname, dnsServers: config.dnsServers, dataDir: config.dataDir, logger, now: () => core.clock.now(),
    }));
    return (await inProcess)(raw, delivery);
  };
  return { parse, close: async () => undefined };
}

/**
 * Wires the SMTP ingress: registers our raw parser (mailparser + mailauth) with ingest, and builds
 * the listener whose RCPT checks go through `resolve` and whose DATA goes to `ingest.acceptRaw`.
 * `start` in app.ts calls `listen`, `stop` calls `close`. Certificate swaps come from `deps.tls`.
 */
export function installSmtp(core: Core, deps: SmtpDeps, options: { limits?: Partial<ListenerLimits>; parserThreads?: number } = {}) {
  const { config, logger, clock } = core;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const parsing = createParsing(core, options.parserThreads ?? defaultParserThreads());
  deps.ingest.setRawParser(parsing.parse, parsing.parseQueued);
  const quota = cachedQuota((ids, incoming) => deps.ingest.overQuota(ids, Math.max(1, incoming)), clock, limits.maxSize);
  const checkRecipient = createRecipientCheck({ resolve: cachedResolver(deps.resolve, clock), quota, maxRecipients: limits.maxRecipients, hostname: config.hostname });
  const listener = createSmtpListener({ config, logger, clock, tls: deps.tls, checkRecipient, accept: (d) => deps.ingest.acceptRaw(d), overQuota: quota,
    backlogFull: () => deps.ingest.backlogFull(), policy: deps.policy, limits });

  /** Spool files left by sessions that died mid-DATA before a crash: never acknowledged, never adopted. */
  async function sweepSpool(): Promise<void> {
    const dir = join(config.dataDir, 'tmp');
    const names = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(names.filter((n) => /^smtp-[0-9a-f-]+\.eml$/.test(n)).map((n) => unlink(join(dir, n)).catch(() => undefined)));
  }

  return {
    /** Sweeps stale spool files, listens, and resolves with the real port. */
    async listen(): Promise<number> {
      await sweepSpool();
      return listener.listen();
    },
    /** Graceful stop: finishes messages in DATA, then closes the sessions. */
    close: listener.close,
    /** Open sessions and messages in flight. */
    stats: listener.stats,
    /** The parser registered with ingest (mailparser and mailauth, in threads when built). */
    parser: parsing.parse,
    /** Stops the parser threads (they also stop by themselves when idle). */
    stopParsers: parsing.close,
  };
}
/** The SMTP capability as app.ts holds it. */
export type Smtp = ReturnType<typeof installSmtp>;
