// The state of one script run on one message: variables, match variables, the internal flag variable,
// the actions so far and the implicit keep. Bounded: variable sizes, variable count and actions are capped.
import { SieveFault, type Argument, type Call, type Position } from './ast.js';
import type { SieveAction, SieveMessageInput } from './types.js';
import { SieveMessage } from './message.js';
import { DETAIL_SEPARATORS } from './address.js';
import { matchOne, type Matcher, type Relation } from './match.js';

export const LIMITS = { maxVariableSize: 4096, maxVariables: 255, maxMatchVariables: 33, maxActions: 32, maxRedirects: 4 };

// How a command or test is declared: the arguments it takes (validated at parse time) and what it does
// (run per message), beside the Runtime it runs against (spec.ts names them for the rest of the engine).
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

/** Things the environment answers; the conformance harness replaces some of them. */
export interface RuntimeHooks {
  envelope(part: string, input: SieveMessageInput): string[] | null;
  spamtest(percent: boolean, rt: Runtime): string;
}

/** Matchers by call (the compiled script's nodes), read-only once made. */
const MATCHERS = new WeakMap<Call, Readonly<Matcher>>();
/** String lists without variables to expand, by argument. */
const PLAIN_LISTS = new WeakMap<Argument, string[]>();

export class Runtime {
  message: SieveMessage;
  readonly variables = new Map<string, string>();
  matchVariables: string[] = [];
  flags: string[] = [];
  actions: SieveAction[] = [];
  implicitKeep = true;
  discarded = false;
  stopped = false;
  redirects = 0;
  limits = { ...LIMITS };
  /** Characters that separate user from detail (subaddress). */
  detailSeparators = DETAIL_SEPARATORS;
  /** Evaluates a nested test (set by the interpreter). */
  evaluate: (call: Call) => boolean = () => false;

  constructor(readonly required: ReadonlySet<string>, public input: SieveMessageInput, readonly hooks: RuntimeHooks,
    readonly registry: Registry) {
    this.message = new SieveMessage(input.raw, input.size);
    this.evaluate = (call) => this.testSpec(call.name).evaluate(call, this);
  }

  commandSpec(name: string): CommandSpec {
    const spec = this.registry.commands.get(name);
    if (!spec) throw new Error(`no command ${name}`);
    return spec;
  }

  testSpec(name: string): TestSpec {
    const spec = this.registry.tests.get(name);
    if (!spec) throw new Error(`no test ${name}`);
    return spec;
  }

  has(ext: string): boolean { return this.required.has(ext); }

  fail(at: Position, message: string): never { throw new SieveFault(at.line, at.column, message); }

  /** A string argument with variables expanded (RFC 5229 3). */
  str(arg: Argument): string {
    if (arg.kind !== 'list') return String(arg.kind === 'number' ? arg.value : '');
    return this.expand(arg.items[0].value);
  }

  strings(arg: Argument): string[] {
    if (arg.kind !== 'list') return [];
    // A list without variables to expand is the same on every run: made once per compiled argument (frozen: shared).
    const known = PLAIN_LISTS.get(arg);
    if (known) return known;
    const out = arg.items.map((s) => this.expand(s.value));
    if (!this.has('variables') || !arg.items.some((s) => s.value.includes('${'))) PLAIN_LISTS.set(arg, Object.freeze(out) as string[]);
    return out;
  }

  /** Strings exactly as written (comparator names, variable names). */
  literal(arg: Argument | null | undefined): string {
    return arg && arg.kind === 'list' ? arg.items[0].value : '';
  }

  expand(text: string): string {
    if (!this.has('variables') || !text.includes('${')) return text;
    return text.replace(/\$\{([^{}]*)\}/g, (whole, name: string) => {
      const trimmed = name.trim();
      if (/^[0-9]+$/.test(trimmed)) return this.matchVariables[Number(trimmed)] ?? '';
      if (/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(trimmed)) return this.variables.get(trimmed.toLowerCase()) ?? '';
      return whole;
    });
  }

  setVariable(at: Position, name: string, value: string): void {
    const key = name.toLowerCase();
    if (!this.variables.has(key) && this.variables.size >= this.limits.maxVariables) this.fail(at, 'too many variables');
    this.variables.set(key, this.truncate(value));
  }

  truncate(value: string): string {
    if (Buffer.byteLength(value) <= this.limits.maxVariableSize) return value;
    let out = Buffer.from(value).subarray(0, this.limits.maxVariableSize).toString('utf8');
    if (out.endsWith('\ufffd')) out = out.slice(0, -1);
    return out;
  }

  matcher(call: Call): Matcher {
    // A call's comparator and match type are literals: decided once per compiled call, not per message.
    let known = MATCHERS.get(call);
    if (!known) { known = this.matcherOf(call); MATCHERS.set(call, known); }
    return known;
  }

  private matcherOf(call: Call): Matcher {
    // The string test compares octets unless told otherwise (as Pigeonhole does); every other test folds case.
    const fallback = call.name === 'string' ? 'i;octet' : 'i;ascii-casemap';
    const comparator = (this.literal(call.tags.get('comparator')) || fallback).toLowerCase();
    for (const type of ['value', 'count'] as const) {
      const rel = call.tags.get(type);
      if (rel) return { comparator, type, relation: this.literal(rel).toLowerCase() as Relation };
    }
    const type = call.tags.has('contains') ? 'contains' : call.tags.has('matches') ? 'matches' : 'is';
    return { comparator, type, relation: 'eq' };
  }

  /** Whether any value matches any key under the call's match type; sets match variables on :matches. */
  matchValues(call: Call, values: string[], keys: string[], setsMatchVariables = true): boolean {
    const m = this.matcher(call);
    if (m.type === 'count') {
      const count = String(values.length);
      return keys.some((k) => matchOne(m, count, k, false) !== null);
    }
    const capture = setsMatchVariables && m.type === 'matches' && this.has('variables');
    for (const value of values) {
      for (const key of keys) {
        const caps = matchOne(m, value, key, capture);
        if (caps) {
          if (capture) this.matchVariables = caps.slice(0, this.limits.maxMatchVariables).map((c) => this.truncate(c));
          return true;
        }
      }
    }
    return false;
  }

  addAction(at: Position, action: SieveAction): void {
    if (this.actions.length >= this.limits.maxActions) this.fail(at, 'too many actions');
    this.actions.push(action);
  }
}

/** IMAP flag lists: space-separated, deduplicated case-insensitively (RFC 5232 3). */
export function flagList(strings: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const s of strings) {
    for (const flag of s.split(/\s+/)) {
      if (!flag) continue;
      const key = flag.toLowerCase();
      if (!seen.has(key)) { seen.add(key); out.push(flag); }
    }
  }
  return out;
}
