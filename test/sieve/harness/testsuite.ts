// A test-only implementation of Pigeonhole's vnd.dovecot.testsuite extension over our interpreter, so that
// Pigeonhole's *.svtest files run against it. Only the commands the files of our extensions use are here.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SieveFault, type Call } from '../../../src/sieve/ast.js';
import type { SieveAction, SieveMessageInput } from '../../../src/sieve/api.js';
import { compile, compileWithErrors, DEFAULT_HOOKS, finalActions, runBlock, spamtestValue, type Compiled } from '../../../src/sieve/engine.js';
import { makeRegistry } from '../../../src/sieve/registry.js';
import { Runtime, type RuntimeHooks } from '../../../src/sieve/runtime.js';
import { SieveMessage } from '../../../src/sieve/message.js';
import { MATCHING } from '../../../src/sieve/tags.js';
import type { CommandSpec, Registry, TestSpec } from '../../../src/sieve/spec.js';
import { outgoingMessages } from './outgoing.js';
import { addressesOf } from '../../../src/sieve/address.js';

export interface TestOutcome { name: string; passed: boolean; reason?: string }
export interface FileOutcome { file: string; tests: TestOutcome[]; compileError?: string }

class TestFailure extends Error {}

const DEFAULT_MESSAGE = 'From: sender@example.com\r\nTo: recipient@example.com\r\nSubject: Frop\r\n\r\nTest\r\n';

/** The state of one svtest file's run: mail store, sent messages, config, last compile errors. */
class Suite {
  folders = new Map<string, Array<{ raw: Buffer; flags: string[] }>>([['INBOX', []]]);
  smtp: Array<{ from: string | null; to: string; raw: Buffer }> = [];
  config = new Map<string, string>();
  errors: string[] = [];
  compiled: Compiled | null = null;
  outcomes: TestOutcome[] = [];
  auth: string | null = null;
  envelope: { from?: string | null; to?: string } = {};
  origTo: string | null = null;

  constructor(readonly dir: string) {}

  folderExists = (name: string): boolean => this.folders.has(name.toUpperCase() === 'INBOX' ? 'INBOX' : name);

  hooks: RuntimeHooks = {
    envelope: (part, input) => {
      if (part === 'auth') return this.auth === null ? [] : [this.auth];
      if (part === 'orig_to') return [this.origTo ?? input.envelope.to];
      return DEFAULT_HOOKS.envelope(part, input);
    },
    spamtest: (percent, rt) => this.spamtest(percent, rt),
  };

  spamtest(percent: boolean, rt: Runtime): string {
    const header = this.config.get('sieve_spamtest_status_header');
    if (!header) return '0';
    const type = this.config.get('sieve_spamtest_status_type') ?? 'score';
    const read = (spec: string): string | null => {
      const colon = spec.indexOf(':');
      const name = colon < 0 ? spec : spec.slice(0, colon);
      const value = rt.message.rawValues(name)[0];
      if (value === undefined) return null;
      if (colon < 0) return value.trim();
      const m = new RegExp(spec.slice(colon + 1).replace(/^/, '^' + name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&') + ':')).exec(`${name}:${value}`);
      return m ? (m[1] ?? '') : null;
    };
    const value = read(header);
    if (value === null) return '0';
    if (type === 'text') {
      const spam = this.config.get('sieve_spamtest_text_value10') ?? 'Yes';
      const ham = this.config.get('sieve_spamtest_text_value1') ?? 'No';
      if (value === spam) return percent ? '100' : '10';
      if (value === ham) return percent ? '0' : '1';
      return '0';
    }
    const maxHeader = this.config.get('sieve_spamtest_max_header');
    const max = Number(maxHeader ? read(maxHeader) : this.config.get('sieve_spamtest_max_value'));
    const score = type === 'strlen' ? value.length : Number(value);
    if (!Number.isFinite(score) || !Number.isFinite(max) || max <= 0) return '0';
    return spamtestValue({ score, threshold: max, verdict: score >= max ? 'junk' : 'ham' }, percent);
  }

  input(raw: Buffer = Buffer.from(DEFAULT_MESSAGE)): SieveMessageInput {
    return {
      raw, envelope: { from: 'sender@example.com', to: 'recipient@example.com' }, spam: null,
      mailboxAddress: 'recipient@example.com', now: new Date(), folderExists: this.folderExists,
    };
  }

  /** Carries out a result on the test mail store and outgoing queue (test_result_execute). */
  execute(rt: Runtime, actions: SieveAction[]): void {
    for (const a of actions) {
      if (a.type === 'keep') this.folders.get('INBOX')!.push({ raw: rt.message.raw, flags: a.flags });
      if (a.type === 'fileinto') {
        if (!this.folderExists(a.folder)) {
          if (!a.create) throw new TestFailure(`folder ${a.folder} does not exist`);
          this.folders.set(a.folder, []);
        }
        this.folders.get(a.folder)!.push({ raw: rt.message.raw, flags: a.flags });
      }
    }
    // Each executed result starts a fresh outbox, as Pigeonhole's testsuite does.
    this.smtp = outgoingMessages(rt, actions, this.config, this.origTo);
  }
}

function string(rt: Runtime, call: Call, i = 0): string { return rt.str(call.positional[i]); }

function resetResult(rt: Runtime): void {
  rt.actions = [];
  rt.implicitKeep = true;
  rt.discarded = false;
  rt.redirects = 0;
}

function harnessRegistry(suite: Suite): Registry {
  const commands: Record<string, CommandSpec> = {
    test: {
      ext: ['vnd.dovecot.testsuite'], positional: [['string']], block: true,
      exec(call, rt) {
        const name = string(rt, call);
        resetResult(rt);
        try {
          runBlock(call.block ?? [], rt);
          suite.outcomes.push({ name, passed: true });
        } catch (e) {
          const reason = e instanceof TestFailure ? e.message : e instanceof SieveFault ? `runtime error line ${e.line}: ${e.message}` : String(e);
          suite.outcomes.push({ name, passed: false, reason });
        }
        rt.stopped = false;
      },
    },
    test_fail: { ext: ['vnd.dovecot.testsuite'], positional: [['string']], exec(call, rt) { throw new TestFailure(string(rt, call)); } },
    test_set: {
      ext: ['vnd.dovecot.testsuite'], positional: [['string', 'string']],
      exec(call, rt) {
        const what = string(rt, call).toLowerCase();
        const value = string(rt, call, 1);
        const bare = value.replace(/^<(.*)>$/, '$1');
        if (what === 'message') {
          rt.message = new SieveMessage(Buffer.from(value));
          // The envelope is what a test set, else it follows the message (Return-Path or From, and To);
          // reading a sent message (test_message :smtp) changed it only until the next message is set.
          const from = suite.envelope.from !== undefined ? suite.envelope.from
            : addressesOf(rt.message.values('return-path')[0] ?? rt.message.values('from')[0] ?? '')[0] ?? rt.input.envelope.from;
          const to = suite.envelope.to ?? addressesOf(rt.message.values('to')[0] ?? '')[0] ?? rt.input.envelope.to;
          rt.input = { ...rt.input, raw: rt.message.raw, envelope: { from, to } };
          return;
        }
        if (what === 'envelope.from') {
          // The engine reads the path as given (brackets, source routes); only the null path becomes null.
          suite.envelope.from = bare === '' ? null : value;
          rt.input = { ...rt.input, envelope: { ...rt.input.envelope, from: suite.envelope.from } };
        } else if (what === 'envelope.to') {
          suite.envelope.to = value;
          rt.input = { ...rt.input, envelope: { ...rt.input.envelope, to: value } };
        }
        else if (what === 'envelope.auth') suite.auth = bare;
        else if (what === 'envelope.orig_to') suite.origTo = bare;
        else throw new TestFailure(`test_set ${what} is not supported by the harness`);
      },
    },
    test_config_set: { ext: ['vnd.dovecot.testsuite'], positional: [['string', 'string']], exec(call, rt) { suite.config.set(string(rt, call), string(rt, call, 1)); applyConfig(suite, rt); } },
    test_config_unset: { ext: ['vnd.dovecot.testsuite'], positional: [['string']], exec(call, rt) { suite.config.delete(string(rt, call)); applyConfig(suite, rt); } },
    test_config_reload: { ext: ['vnd.dovecot.testsuite'], positional: [[]], tags: { extension: { arg: 'string' } }, exec() {} },
    test_result_reset: { ext: ['vnd.dovecot.testsuite'], positional: [[]], exec(_call, rt) { resetResult(rt); } },
    // vnd.dovecot.debug: a log line, nothing to check.
    debug_log: { ext: ['vnd.dovecot.debug'], positional: [['string']], exec() {} },
    test_result_print: { ext: ['vnd.dovecot.testsuite'], positional: [[]], exec() {} },
    test_mailbox_create: { ext: ['vnd.dovecot.testsuite'], positional: [['string']], exec(call, rt) { suite.folders.set(string(rt, call), []); } },
    test_message: {
      ext: ['vnd.dovecot.testsuite'], positional: [['number'], ['string', 'number']],
      tags: { smtp: { group: 'source' }, folder: { arg: 'string', group: 'source' } },
      exec(call, rt) { if (!selectMessage(suite, call, rt)) throw new TestFailure('no such message'); },
    },
  };
  const tests: Record<string, TestSpec> = {
    test_script_compile: {
      ext: ['vnd.dovecot.testsuite'], positional: [['string']],
      evaluate(call, rt) {
        const path = join(suite.dir, string(rt, call));
        let text: string;
        try { text = readFileSync(path, 'utf8'); } catch { suite.errors = [`cannot read ${path}`]; return false; }
        const { result, errors } = compileWithErrors(text, rt.registry);
        // Pigeonhole ends a failed validation with one more error, "validation failed"; its counts include it.
        suite.errors = result.ok ? [] : [...errors.map((e) => e.message), ...(errors.length && !/syntax error/.test(errors[0].message) ? ['validation failed'] : [])];
        suite.compiled = result.ok ? (result.script as Compiled) : null;
        return result.ok;
      },
    },
    test_script_run: {
      ext: ['vnd.dovecot.testsuite'], positional: [[]], tags: { append_result: {} },
      evaluate(call, rt) {
        if (!suite.compiled) return false;
        const sub = new Runtime(suite.compiled.required, rt.input, suite.hooks, suite.compiled.registry);
        sub.limits = rt.limits;
        if (call.tags.has('append_result')) { sub.actions = rt.actions; sub.implicitKeep = rt.implicitKeep; }
        try {
          runBlock(suite.compiled.calls, sub);
        } catch (e) {
          if (e instanceof SieveFault) { suite.errors = [e.message]; return false; }
          throw e;
        }
        rt.actions = sub.actions; rt.implicitKeep = sub.implicitKeep; rt.discarded = sub.discarded; rt.flags = sub.flags;
        return true;
      },
    },
    test_result_execute: {
      ext: ['vnd.dovecot.testsuite'], positional: [[]],
      evaluate(_call, rt) {
        try { suite.execute(rt, finalActions(rt)); return true; } catch (e) { if (e instanceof TestFailure) return false; throw e; }
      },
    },
    test_result_action: {
      ext: ['vnd.dovecot.testsuite'], positional: [['strings']], tags: { ...MATCHING, index: { arg: 'number' } },
      evaluate(call, rt) {
        const names = rt.actions.map((a) => (a.type === 'fileinto' ? 'store' : a.type === 'keep' ? 'keep' : a.type));
        const idx = call.tags.get('index');
        const values = idx && idx.kind === 'number' ? (names[idx.value - 1] === undefined ? [] : [names[idx.value - 1]]) : names;
        return rt.matchValues(call, values, rt.strings(call.positional[0]));
      },
    },
    test_error: {
      ext: ['vnd.dovecot.testsuite'], positional: [['strings']], tags: { ...MATCHING, index: { arg: 'number' } },
      evaluate(call, rt) {
        const idx = call.tags.get('index');
        const values = idx && idx.kind === 'number' ? suite.errors.slice(idx.value - 1, idx.value) : suite.errors;
        return rt.matchValues(call, values, rt.strings(call.positional[0]));
      },
    },
    test_message: {
      ext: ['vnd.dovecot.testsuite'], positional: [['number'], ['string', 'number']],
      tags: { smtp: { group: 'source' }, folder: { arg: 'string', group: 'source' } },
      evaluate: (call, rt) => selectMessage(suite, call, rt),
    },
  };
  return makeRegistry({ extensions: ['vnd.dovecot.testsuite', 'vnd.dovecot.debug'], commands, tests });
}

function applyConfig(suite: Suite, rt: Runtime): void {
  const size = suite.config.get('sieve_variables_max_variable_size');
  rt.limits.maxVariableSize = size ? Number(size) : 4096;
  const count = suite.config.get('sieve_variables_max_scope_size');
  rt.limits.maxVariables = count ? Number(count) : 255;
  rt.detailSeparators = suite.config.get('recipient_delimiter') ?? '+';
  const redirects = suite.config.get('sieve_max_redirects');
  rt.limits.maxRedirects = redirects ? Number(redirects) : 4;
}

function selectMessage(suite: Suite, call: Call, rt: Runtime): boolean {
  const indexArg = call.positional[call.positional.length - 1];
  const index = indexArg.kind === 'number' ? indexArg.value : 0;
  let raw: Buffer | undefined;
  const folder = call.tags.get('folder');
  if (folder) {
    // A stored message brings its flags: hasflag then reads them, as Pigeonhole's testsuite does.
    const stored = suite.folders.get(rt.str(folder))?.[index];
    raw = stored?.raw;
    if (stored) rt.flags = [...stored.flags];
  } else {
    const sent = suite.smtp[index];
    if (sent) {
      raw = sent.raw;
      rt.input = { ...rt.input, envelope: { from: sent.from, to: sent.to } };
    }
  }
  if (!raw) return false;
  rt.message = new SieveMessage(raw);
  rt.input = { ...rt.input, raw };
  return true;
}

/** Runs one svtest file; every `test` block is one test. */
export function runSvtest(path: string): FileOutcome {
  const text = readFileSync(path, 'utf8');
  const suite = new Suite(dirname(path));
  const registry = harnessRegistry(suite);
  const declared = [...text.matchAll(/^\s*test\s+"((?:[^"\\]|\\.)*)"/gm)].map((m) => m[1]);
  const result = compile(text, registry);
  if (!result.ok) {
    return { file: path, tests: declared.map((name) => ({ name, passed: false, reason: result.error.message })), compileError: result.error.message };
  }
  const compiled = result.script as Compiled;
  const rt = new Runtime(compiled.required, suite.input(), suite.hooks, registry);
  try {
    runBlock(compiled.calls, rt);
  } catch (e) {
    const reason = e instanceof SieveFault || e instanceof TestFailure ? e.message : String(e);
    for (const name of declared.slice(suite.outcomes.length)) suite.outcomes.push({ name, passed: false, reason: `top level: ${reason}` });
  }
  return { file: path, tests: suite.outcomes };
}
