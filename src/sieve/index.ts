// The Sieve engine (RFC 5228 and the extensions of DECISIONS.md section 19).
export type {
  SieveError, CompiledScript, ParseResult, SieveMessageInput, SieveAction, SieveOutcome,
} from './api.js';
export { parseSieve, runSieve, SIEVE_EXTENSIONS } from './api.js';
