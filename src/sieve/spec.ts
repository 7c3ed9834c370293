// How a command or test is declared: the arguments it takes (validated at parse time) and what it does
// (run per message). The product's registry is in registry.ts; the conformance harness adds its own.
// Declared in runtime.ts beside the Runtime they run against, so neither file imports the other.
export type { ArgKind, CheckContext, CommandSpec, Registry, TagSpec, TestSpec } from './runtime.js';
