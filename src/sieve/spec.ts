// How a command or test is declared: the arguments it takes (validated at parse time) and what it does
// (run per message). The product's registry is in registry.ts; the conformance harness adds its own.
import type { Call } from './ast.js';
import type { Runtime } from './runtime.js';

export type ArgKind = 'string' | 'strings' | 'number';

export interface TagSpec {
  /** The argument the tag takes, if any. */
  arg?: ArgKind;
  /** Tags of one group exclude each other (match types, address parts, ...). */
  group?: string;
  /** The extension a script must require to use this tag. */
  ext?: string;
}

interface BaseSpec {
  /** Any one of these extensions must be required to use it (none: base language). */
  ext?: string[];
  tags?: Record<string, TagSpec>;
  /** Accepted positional argument shapes (first that fits wins). */
  positional: ArgKind[][];
  /** Extra checks at parse time; throw SieveFault to refuse. */
  check?(call: Call, ctx: CheckContext): void;
}

export interface CommandSpec extends BaseSpec {
  /** 0: no test; 1: exactly one test. */
  tests?: 0 | 1;
  block?: boolean;
  exec(call: Call, rt: Runtime): void;
}

export interface TestSpec extends BaseSpec {
  /** 'one' for not, 'list' for allof/anyof. */
  tests?: 'one' | 'list';
  evaluate(call: Call, rt: Runtime): boolean;
}

export interface Registry {
  /** Extensions a script may require. */
  extensions: ReadonlySet<string>;
  commands: ReadonlyMap<string, CommandSpec>;
  tests: ReadonlyMap<string, TestSpec>;
}

export interface CheckContext {
  required: ReadonlySet<string>;
  /** Variable names set so far (variables: at most 255 in a script). */
  declared: Set<string>;
}
