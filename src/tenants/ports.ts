import type { KeyRow } from './store.js';

/**
 * How the key row of a presented API key's hash is looked up on every request, which differs
 * between the backends (sqlite/ and postgres/key-lookup.ts).
 */
export interface KeyLookup {
  /** The key row of `hash`, revoked or not, or undefined when no key has it. */
  keyRow(hash: string): Promise<KeyRow | undefined>;
}
