// Parse once, run per message. A compiled script keeps its validated calls and the registry it was
// checked against; a run never throws: a runtime error becomes the outcome "keep + error".
import { SieveFault, type Call, type CommandNode } from './ast.js';
import type { CompiledScript, ParseResult, SieveError, SieveAction, SieveMessageInput, SieveOutcome } from './types.js';
import type { Registry } from './spec.js';
import { sieveParser } from './grammar.js';
import { SieveFaults, validateScript } from './validate.js';
import { Runtime, type RuntimeHooks } from './runtime.js';
import { PRODUCT_REGISTRY } from './registry.js';

export const MAX_SCRIPT_BYTES = 64 * 1024;

export interface Compiled extends CompiledScript { readonly calls: Call[]; readonly registry: Registry; readonly required: ReadonlySet<string> }

/** Peggy's expectations in words a script author reads: literals quoted, character classes named. */
function describeExpected(x: { type: string; text?: string; description?: string; parts?: unknown[] }): string {
  if (x.type === 'literal') return x.text === '\\' ? '' : x.text === '"' ? `'"'` : x.text === 'text:' ? 'text:' : `"${x.text}"`;
  if (x.type === 'class') return JSON.stringify(x.parts) === '[["0","9"]]' ? 'a number' : '';
  if (x.type === 'other' && x.description === 'identifier') return 'a command or test name';
  return '';
}

function describeFound(found: string | null): string {
  if (found === null) return 'end of script';
  if (found === '\n' || found === '\r') return 'end of line';
  return `"${found}"`;
}

const formatFault = (e: SieveFault): SieveError => ({ line: e.line, column: e.column, message: `line ${e.line}, column ${e.column}: ${e.message}` });

export function compile(text: string, registry: Registry = PRODUCT_REGISTRY): ParseResult {
  return compileWithErrors(text, registry).result;
}

/** The parse result and, when it failed validation, every error found (one per command). */
export function compileWithErrors(text: string, registry: Registry = PRODUCT_REGISTRY): { result: ParseResult; errors: SieveError[] } {
  try {
    return { result: compileOrThrow(text, registry), errors: [] };
  } catch (e) {
    if (e instanceof SieveFaults) return { result: { ok: false, error: formatFault(e) }, errors: e.all.map(formatFault) };
    if (e instanceof SieveFault) return { result: { ok: false, error: formatFault(e) }, errors: [formatFault(e)] };
    throw e;
  }
}

/** Parses and validates; syntax errors become a SieveFault, validation errors a SieveFaults. */
function compileOrThrow(text: string, registry: Registry): ParseResult {
  if (Buffer.byteLength(text) > MAX_SCRIPT_BYTES) throw new SieveFault(1, 1, `script is larger than ${MAX_SCRIPT_BYTES} bytes`);
  const parser = sieveParser();
  try {
    const nodes = parser.parse(text, {}) as CommandNode[];
    const { calls, required } = validateScript(nodes, registry);
    const script: Compiled = { extensions: [...required], calls, registry, required };
    return { ok: true, script };
  } catch (e) {
    if (e instanceof parser.SyntaxError) {
      const err = e as unknown as { location: { start: { line: number; column: number } }; expected: Array<{ type: string; text?: string; description?: string; parts?: unknown[] }> | null; found: string | null };
      const { line, column } = err.location.start;
      let expected = [...new Set((err.expected ?? []).map(describeExpected))].filter((x) => x !== '');
      // Where arguments may still come, the command may also end: say so in one phrase.
      if (expected.includes('"["')) expected = ['an argument', 'a test', '";"', 'a block'];
      throw new SieveFault(line, column, `syntax error: found ${describeFound(err.found)}` + (expected.length ? `, expected ${expected.slice(0, 6).join(', ')}` : ''));
    }
    throw e;
  }
}

export const DEFAULT_HOOKS: RuntimeHooks = {
  envelope(part, input) {
    if (part === 'from') return [input.envelope.from ?? ''];
    if (part === 'to') return [input.envelope.to];
    return null;
  },
  spamtest(percent, rt) {
    return spamtestValue(rt.input.spam, percent);
  },
};

/**
 * RFC 5235: "0" means not classified; otherwise 1-10 (0-100 with :percent) rises with the score scaled
 * against the threshold (the scaling Pigeonhole uses), so 10 (100) means at or over the threshold.
 */
export function spamtestValue(spam: SieveMessageInput['spam'], percent: boolean): string {
  if (!spam) return '0';
  let ratio = spam.threshold > 0 ? spam.score / spam.threshold : (spam.verdict === 'junk' ? 1 : 0);
  if (spam.verdict === 'junk') ratio = Math.max(ratio, 1);
  ratio = Math.min(1, Math.max(0, ratio));
  return percent ? String(Math.round(ratio * 100)) : String(1 + Math.floor(ratio * 9));
}

/** Runs the calls of a block; returns false once `stop` ran. */
function runBlock(calls: Call[], rt: Runtime): void {
  let branchTaken = false;
  for (const call of calls) {
    if (rt.stopped) return;
    const spec = rt.commandSpec(call.name);
    if (call.name === 'if' || call.name === 'elsif' || call.name === 'else') {
      if (call.name === 'if') branchTaken = false;
      if (branchTaken) continue;
      if (call.name === 'else' || rt.evaluate(call.tests[0])) {
        branchTaken = true;
        runBlock(call.block ?? [], rt);
      }
      continue;
    }
    if (call.name === 'stop') { rt.stopped = true; return; }
    spec.exec(call, rt);
  }
}

/** The actions of a run that ended normally: explicit ones, then the implicit keep if it still stands. */
export function finalActions(rt: Runtime): SieveAction[] {
  const actions = [...rt.actions];
  if (rt.implicitKeep && !actions.some((a) => a.type === 'keep')) actions.push({ type: 'keep', flags: [...rt.flags] });
  const delivered = actions.some((a) => a.type === 'keep' || a.type === 'fileinto' || a.type === 'reject' || (a.type === 'redirect' && !a.copy));
  if (!delivered && rt.discarded) actions.push({ type: 'discard' });
  return actions;
}

export function startRun(script: CompiledScript, input: SieveMessageInput, hooks: RuntimeHooks = DEFAULT_HOOKS): Runtime {
  const compiled = script as Compiled;
  const rt = new Runtime(compiled.required, input, hooks, compiled.registry);
  return rt;
}

export function execute(script: CompiledScript, input: SieveMessageInput, hooks: RuntimeHooks = DEFAULT_HOOKS): SieveOutcome {
  const compiled = script as Compiled;
  const rt = startRun(script, input, hooks);
  try {
    runBlock(compiled.calls, rt);
    return { actions: finalActions(rt) };
  } catch (e) {
    if (e instanceof SieveFault) {
      return { actions: [{ type: 'keep', flags: [] }], error: { line: e.line, column: e.column, message: `line ${e.line}, column ${e.column}: ${e.message}` } };
    }
    // Never lose a message, whatever went wrong inside the engine.
    return { actions: [{ type: 'keep', flags: [] }], error: { line: 1, column: 1, message: `line 1, column 1: internal error: ${(e as Error).message}` } };
  }
}

export { runBlock };
