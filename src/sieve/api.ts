// The Sieve engine's whole surface as the delivery side uses it (DECISIONS.md section 19).
// Parse once (parseSieve), run per delivered message (runSieve); the outcome always says where the
// message goes, so a script error can never lose a message.
import { compile, execute } from './engine.js';
import { SIEVE_EXTENSION_LIST } from './registry.js';
import type { CompiledScript, ParseResult, SieveMessageInput, SieveOutcome } from './types.js';

export type { CompiledScript, ParseResult, SieveAction, SieveError, SieveMessageInput, SieveOutcome } from './types.js';

/** The SIEVE capability list of section 19 (ManageSieve CAPABILITY, `require` validation). */
export const SIEVE_EXTENSIONS: readonly string[] = SIEVE_EXTENSION_LIST;

/** Parses and validates a script (at most 64 KB); errors say "line L, column C: ...". */
export function parseSieve(text: string): ParseResult {
  return compile(text);
}

/** Runs a compiled script on one message; never throws (a runtime error is keep + error). */
export function runSieve(script: CompiledScript, input: SieveMessageInput): SieveOutcome {
  return execute(script, input);
}
