import type { Core } from '../core.js';
import { createBlobStore } from '../ingest/blobs.js';
import type { RawParser } from '../ingest/types.js';
import { createAuthenticator } from './auth.js';
import { createRawParser, limitConcurrency, PARSE_CONCURRENCY, storingParser } from './parse.js';

/**
 * Parsing on the calling thread (tests and `tsx`, where no parser threads run). index.ts imports
 * this module only then: mailauth and mailparser hold ~15 MB of heap, which the main thread of the
 * built server would otherwise carry (and mark on every full GC) without ever parsing.
 */
export function createInProcessParser(core: Core): RawParser {
  const { config, logger } = core;
  const authenticate = createAuthenticator({ hostname: config.hostname, dnsServers: config.dnsServers, logger });
  return limitConcurrency(storingParser(createRawParser({ hostname: config.hostname, authenticate, logger }), createBlobStore(config.dataDir, () => core.clock.now())), PARSE_CONCURRENCY);
}
