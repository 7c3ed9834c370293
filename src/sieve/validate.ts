// Parse-time validation (RFC 5228 section 3.2 and 2.7): required extensions, known commands and tests,
// tagged arguments and their types, comparators and match types. Turns the syntax tree into Calls.
import { SieveFault, type Argument, type Call, type CommandNode, type TestNode } from './ast.js';
import type { ArgKind, CheckContext, Registry, TagSpec } from './spec.js';
import { decodeEncodedCharacters } from './encoded-character.js';

const COMPARATORS: Record<string, string | null> = {
  'i;octet': null, 'i;ascii-casemap': null, 'i;ascii-numeric': 'comparator-i;ascii-numeric',
};
const RELATIONS = new Set(['gt', 'ge', 'lt', 'le', 'eq', 'ne']);

export interface Validated { calls: Call[]; required: Set<string> }

/** Every error of a script that failed validation (one per command), the first one first. */
export class SieveFaults extends SieveFault {
  constructor(readonly all: SieveFault[]) { super(all[0].line, all[0].column, all[0].message); }
}

export function validateScript(nodes: CommandNode[], registry: Registry): Validated {
  const required = new Set<string>();
  const ctx: CheckContext = { required, declared: new Set() };
  const errors: SieveFault[] = [];
  let requiresAllowed = true;
  const calls: Call[] = [];
  for (const node of nodes) {
    if (node.name === 'require') {
      try {
        if (!requiresAllowed) throw new SieveFault(node.line, node.column, 'require must come before any other command');
        collectRequire(node, registry, required);
      } catch (e) {
        if (!(e instanceof SieveFault)) throw e;
        errors.push(e);
      }
    } else {
      requiresAllowed = false;
    }
  }
  if (required.has('encoded-character')) {
    for (const node of nodes) {
      try { decodeStrings(node); } catch (e) { if (!(e instanceof SieveFault)) throw e; errors.push(e); }
    }
  }
  checkBlock(nodes, registry, ctx, calls, true, errors);
  if (errors.length) throw new SieveFaults(errors);
  return { calls, required };
}

function collectRequire(node: CommandNode, registry: Registry, required: Set<string>): void {
  const arg = node.args[0];
  if (node.args.length !== 1 || arg.kind !== 'list' || node.tests.length || node.block) {
    throw new SieveFault(node.line, node.column, 'require takes one string list');
  }
  for (const item of arg.items) {
    const name = item.value;
    if (!registry.extensions.has(name)) {
      throw new SieveFault(item.line, item.column, `unsupported extension "${name}"`);
    }
    required.add(name);
    // Extensions that build on another imply it.
    if (name === 'spamtestplus') required.add('spamtest');
    if (name === 'vacation-seconds') required.add('vacation');
  }
}

function decodeStrings(node: CommandNode | TestNode): void {
  for (const arg of node.args) if (arg.kind === 'list') for (const s of arg.items) s.value = decodeEncodedCharacters(s.value, s);
  for (const test of node.tests) decodeStrings(test);
  if (node.type === 'command' && node.block) for (const c of node.block) decodeStrings(c);
}

// Each command is checked on its own so that one script reports all its mistakes, one per command.
function checkBlock(nodes: CommandNode[], registry: Registry, ctx: CheckContext, out: Call[], top: boolean, errors: SieveFault[]): void {
  let previous: string | null = null;
  for (const node of nodes) {
    try {
      previous = checkCommand(node, previous, registry, ctx, out, top, errors);
    } catch (e) {
      if (!(e instanceof SieveFault)) throw e;
      errors.push(e);
      previous = node.name;
    }
  }
}

function checkCommand(node: CommandNode, previous: string | null, registry: Registry, ctx: CheckContext, out: Call[], top: boolean, errors: SieveFault[]): string {
  {
    if (node.name === 'require') {
      if (!top) throw new SieveFault(node.line, node.column, 'require is only allowed at the top of the script');
      return 'require';
    }
    if ((node.name === 'elsif' || node.name === 'else') && previous !== 'if' && previous !== 'elsif') {
      throw new SieveFault(node.line, node.column, `${node.name} without a preceding if`);
    }
    const spec = registry.commands.get(node.name);
    if (!spec) {
      if (registry.tests.has(node.name)) throw new SieveFault(node.line, node.column, `'${node.name}' is a test, not a command`);
      throw new SieveFault(node.line, node.column, `unknown command '${node.name}'`);
    }
    requireExtension(spec.ext, ctx, node, 'command');
    if (ctx.required.has('variables')) checkReferences(node);
    const call = buildCall(node, spec.tags ?? {}, spec.positional, ctx);
    const wantTests = spec.tests ?? 0;
    if (node.tests.length !== wantTests) {
      throw new SieveFault(node.line, node.column,
        wantTests ? `command '${node.name}' needs one test` : `command '${node.name}' takes no test`);
    }
    if (node.testList) throw new SieveFault(node.line, node.column, `command '${node.name}' takes a single test, not a test list`);
    call.tests = node.tests.map((t) => checkTest(t, registry, ctx));
    if (spec.block) {
      if (!node.block) throw new SieveFault(node.line, node.column, `command '${node.name}' needs a block`);
      call.block = [];
      checkBlock(node.block, registry, ctx, call.block, false, errors);
    } else if (node.block) {
      throw new SieveFault(node.line, node.column, `command '${node.name}' takes no block`);
    }
    spec.check?.(call, ctx);
    out.push(call);
    return node.name;
  }
}

function checkTest(node: TestNode, registry: Registry, ctx: CheckContext): Call {
  const spec = registry.tests.get(node.name);
  if (!spec) {
    if (registry.commands.has(node.name)) throw new SieveFault(node.line, node.column, `'${node.name}' is a command, not a test`);
    throw new SieveFault(node.line, node.column, `unknown test '${node.name}'`);
  }
  requireExtension(spec.ext, ctx, node, 'test');
  const call = buildCall(node, spec.tags ?? {}, spec.positional, ctx);
  if (spec.tests === 'one' && node.testList) throw new SieveFault(node.line, node.column, `test '${node.name}' takes a single test, not a test list`);
  if (spec.tests === 'list' && !node.testList) throw new SieveFault(node.line, node.column, `test '${node.name}' needs a test list in parentheses`);
  if (spec.tests === 'one' && node.tests.length !== 1) throw new SieveFault(node.line, node.column, `test '${node.name}' needs one test`);
  if (spec.tests === 'list' && node.tests.length === 0) throw new SieveFault(node.line, node.column, `test '${node.name}' needs a test list`);
  if (!spec.tests && node.tests.length) throw new SieveFault(node.line, node.column, `test '${node.name}' takes no test`);
  call.tests = node.tests.map((t) => checkTest(t, registry, ctx));
  spec.check?.(call, ctx);
  return call;
}

function requireExtension(ext: string[] | undefined, ctx: CheckContext, node: { line: number; column: number; name: string }, what: string): void {
  if (ext && !ext.some((e) => ctx.required.has(e))) {
    throw new SieveFault(node.line, node.column, `${what} '${node.name}' needs require "${ext[0]}"`);
  }
}

function fits(arg: Argument, kind: ArgKind): boolean {
  if (kind === 'number') return arg.kind === 'number';
  if (arg.kind !== 'list') return false;
  return kind === 'strings' || (arg.single === true);
}

function describe(kind: ArgKind): string {
  return kind === 'number' ? 'a number' : kind === 'string' ? 'a string' : 'a string list';
}

function buildCall(node: CommandNode | TestNode, tags: Record<string, TagSpec>, shapes: ArgKind[][], ctx: CheckContext): Call {
  const call: Call = { name: node.name, tags: new Map(), positional: [], tests: [], block: null, line: node.line, column: node.column };
  const groups = new Map<string, string>();
  const args = node.args;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.kind !== 'tag') {
      call.positional.push(arg);
      continue;
    }
    if (call.positional.length) throw new SieveFault(arg.line, arg.column, `tag ':${arg.name}' after positional arguments of '${node.name}'`);
    const tag = tags[arg.name];
    if (!tag) throw new SieveFault(arg.line, arg.column, `unknown tag ':${arg.name}' for '${node.name}'`);
    if (tag.ext && !ctx.required.has(tag.ext)) throw new SieveFault(arg.line, arg.column, `tag ':${arg.name}' needs require "${tag.ext}"`);
    if (call.tags.has(arg.name)) throw new SieveFault(arg.line, arg.column, `tag ':${arg.name}' given twice`);
    if (tag.group) {
      const other = groups.get(tag.group);
      if (other) throw new SieveFault(arg.line, arg.column, `tags ':${other}' and ':${arg.name}' exclude each other`);
      groups.set(tag.group, arg.name);
    }
    if (tag.arg) {
      const value = args[i + 1];
      if (!value || !fits(value, tag.arg)) throw new SieveFault(arg.line, arg.column, `tag ':${arg.name}' needs ${describe(tag.arg)}`);
      call.tags.set(arg.name, value);
      i++;
    } else {
      call.tags.set(arg.name, null);
    }
  }
  const shape = shapes.find((s) => s.length === call.positional.length && s.every((k, j) => fits(call.positional[j], k)));
  if (!shape) {
    const want = shapes.map((s) => s.length ? s.map(describe).join(' and ') : 'no arguments').join(', or ');
    throw new SieveFault(node.line, node.column, `'${node.name}' takes ${want}`);
  }
  checkMatching(call, ctx);
  return call;
}

/** Comparator and relational checks shared by every test that matches (RFC 5228 2.7.3, RFC 5231). */
function checkMatching(call: Call, ctx: CheckContext): void {
  const comparator = call.tags.get('comparator');
  if (comparator && comparator.kind === 'list') {
    const name = comparator.items[0].value.toLowerCase();
    if (!(name in COMPARATORS)) throw new SieveFault(comparator.line, comparator.column, `unknown comparator "${name}"`);
    const ext = COMPARATORS[name];
    if (ext && !ctx.required.has(ext)) throw new SieveFault(comparator.line, comparator.column, `comparator "${name}" needs require "${ext}"`);
    if (name === 'i;ascii-numeric' && (call.tags.has('contains') || call.tags.has('matches'))) {
      throw new SieveFault(comparator.line, comparator.column, `comparator "${name}" does not support substring matching`);
    }
  }
  for (const rel of ['value', 'count']) {
    const arg = call.tags.get(rel);
    if (arg && arg.kind === 'list' && !RELATIONS.has(arg.items[0].value.toLowerCase())) {
      throw new SieveFault(arg.line, arg.column, `invalid relational operator "${arg.items[0].value}"`);
    }
  }
  if (call.tags.has('last') && !call.tags.has('index')) {
    const pos = call;
    throw new SieveFault(pos.line, pos.column, ':last needs :index');
  }
  const index = call.tags.get('index');
  if (index && index.kind === 'number' && index.value < 1) throw new SieveFault(index.line, index.column, ':index must be 1 or more');
}

export const MAX_MATCH_INDEX = 32;

/** Variable references in a command's strings and its tests' (RFC 5229 3): no namespaces, match index <= 32. */
function checkReferences(node: CommandNode | TestNode): void {
  for (const arg of node.args) {
    if (arg.kind !== 'list') continue;
    for (const s of arg.items) {
      for (const m of s.value.matchAll(/\$\{([^{}]*)\}/g)) {
        const name = m[1].trim();
        if (/^[a-zA-Z_][a-zA-Z0-9_]*(\.[a-zA-Z_][a-zA-Z0-9_]*)+$/.test(name)) {
          throw new SieveFault(s.line, s.column, `unknown variable namespace in "\${${name}}"`);
        }
        if (/^[0-9]+$/.test(name) && Number(name) > MAX_MATCH_INDEX) {
          throw new SieveFault(s.line, s.column, `match variable \${${name}} is over the highest index ${MAX_MATCH_INDEX}`);
        }
      }
    }
  }
  for (const test of node.tests) checkReferences(test);
}
