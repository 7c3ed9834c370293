// The product's registry: the extensions of DECISIONS.md section 19 and their commands and tests.
import type { CommandSpec, Registry, TestSpec } from './spec.js';
import { COMMANDS } from './commands.js';
import { TESTS } from './tests.js';

export const SIEVE_EXTENSION_LIST: readonly string[] = Object.freeze([
  'fileinto', 'reject', 'ereject', 'envelope', 'encoded-character', 'imap4flags', 'vacation',
  'vacation-seconds', 'variables', 'body', 'copy', 'subaddress', 'relational',
  'comparator-i;ascii-numeric', 'mailbox', 'date', 'index', 'spamtest', 'spamtestplus',
]);

export function makeRegistry(extra?: { extensions?: string[]; commands?: Record<string, CommandSpec>; tests?: Record<string, TestSpec> }): Registry {
  return {
    extensions: new Set([...SIEVE_EXTENSION_LIST, 'comparator-i;octet', 'comparator-i;ascii-casemap', ...(extra?.extensions ?? [])]),
    commands: new Map(Object.entries({ ...COMMANDS, ...(extra?.commands ?? {}) })),
    tests: new Map(Object.entries({ ...TESTS, ...(extra?.tests ?? {}) })),
  };
}

export const PRODUCT_REGISTRY = makeRegistry();
