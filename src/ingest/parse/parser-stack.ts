import { createBlobStore } from '../blobs.js';
import type { Logger } from '../../logger.js';
import { createAuthenticator } from '../../mailauth/verify.js';
import type { EncodedMessage } from '../../inbound/encoded-message.js';
import { createRawParser, encodingParser, limitConcurrency, PARSE_CONCURRENCY, storingParser, type ParserOf } from './parse.js';

/** What a parser needs: our hostname, the DNS servers mailauth asks, where blobs go. */
export interface ParserStackOptions {
  hostname: string;
  dnsServers: readonly string[];
  dataDir: string;
  logger: Logger;
  now?: () => number;
}

/**
 * The whole raw-mail parser (mailparser, mailauth, attachment blobs, bounded concurrency), as a
 * parser thread runs it and as in-process parsing does. index.ts imports this module only for
 * in-process parsing: mailauth and mailparser hold ~15 MB of heap, which the main thread of the
 * built server would otherwise carry (and mark on every full GC) without ever parsing.
 */
export function createParserStack(options: ParserStackOptions): ParserOf<EncodedMessage> {
  return limitConcurrency(createUnlimitedParserStack(options), PARSE_CONCURRENCY);
}

/** The same without the bound on parses under way, for a caller that bounds more than the parse (parse-worker.ts). */
export function createUnlimitedParserStack({ hostname, dnsServers, dataDir, logger, now }: ParserStackOptions): ParserOf<EncodedMessage> {
  const authenticate = createAuthenticator({ hostname, dnsServers, logger });
  const blobs = createBlobStore(dataDir, now);
  return encodingParser(storingParser(createRawParser({ hostname, authenticate, logger, spool: blobs.spoolBlob }), blobs));
}
