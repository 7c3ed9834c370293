import { availableParallelism } from 'node:os';
import type { Core } from '../../core.js';
import { databaseFile } from '../../db/connection.js';
import type { QueuedRawParser, RawParser } from '../../inbound/types.js';
import { createParserPool } from './parse-pool.js';

/**
 * Parser threads by default: one core stays with the SMTP and HTTP event loop, the others parse.
 * Running from the TypeScript sources (tsx: development and tests) parses in-process instead,
 * because a thread would first have to compile the parser's sources again.
 */
export function defaultParserThreads(): number {
  if (import.meta.url.endsWith('.ts')) return 0;
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** What parses raw mail for the delivery pipeline: a pool of parser threads, or in-process parsing. */
export interface Parsing {
  parse: RawParser;
  parseQueued?: QueuedRawParser;
  /** Stops the parser threads (they also stop by themselves when idle). */
  close(): Promise<void>;
}

/** The parse step of delivery (mailparser + mailauth): `threads` parser threads, or in-process when 0. */
export function createParsing(core: Core, threads: number): Parsing {
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
