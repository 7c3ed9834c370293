// Commands: control (RFC 5228 3), actions (4, RFC 5228/5429/5230/6131/3894/5490), imap4flags (RFC 5232),
// set (RFC 5229). if/elsif/else and stop are run by the interpreter itself.
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { SieveFault, type Call } from './ast.js';
import type { CommandSpec } from './spec.js';
import { flagList, LIMITS, type Runtime } from './runtime.js';

const MAX_VARIABLE_NAME = 64;

const none = (): void => {};

/** One plain mailbox address (local@domain), or null. */
export function singleAddress(text: string): string | null {
  const list = addressparser(text, { flatten: true });
  if (list.length !== 1) return null;
  const addr = list[0].address;
  return /^[^@\s]+@[^@\s]+$/.test(addr) ? addr : null;
}

function constantAddress(call: Call, arg: Call['positional'][number] | null | undefined, what: string): void {
  if (!arg || arg.kind !== 'list') return;
  const text = arg.items[0].value;
  if (text.includes('${')) return;
  if (!singleAddress(text)) throw new SieveFault(arg.line, arg.column, `${what} "${text}" is not a valid address`);
}

const flagsOf = (call: Call, rt: Runtime): string[] => {
  const tag = call.tags.get('flags');
  return tag ? flagList(rt.strings(tag)) : [...rt.flags];
};

function store(rt: Runtime, call: Call, folder: string | null, copy: boolean, create: boolean): void {
  const flags = flagsOf(call, rt);
  if (!copy) rt.implicitKeep = false;
  const missing = folder !== null && !create && folder.toUpperCase() !== 'INBOX' && !rt.input.folderExists(folder);
  if (folder === null || folder.toUpperCase() === 'INBOX' || missing) {
    // A fileinto of a folder that does not exist keeps into INBOX (DECISIONS.md 19).
    const keep = rt.actions.find((a) => a.type === 'keep');
    if (keep && keep.type === 'keep') { keep.flags = flagList([...keep.flags, ...flags]); return; }
    rt.addAction(call, { type: 'keep', flags });
    return;
  }
  const same = rt.actions.find((a) => a.type === 'fileinto' && a.folder === folder);
  if (same && same.type === 'fileinto') { same.flags = flagList([...same.flags, ...flags]); same.create ||= create; return; }
  rt.addAction(call, { type: 'fileinto', folder, create, flags, copy });
}

function checkRejectConflict(rt: Runtime, call: Call, adding: string): void {
  const rejected = rt.actions.some((a) => a.type === 'reject');
  if (adding === 'reject') {
    const other = rt.actions.find((a) => a.type === 'keep' || a.type === 'fileinto' || (a.type === 'redirect' && !a.copy) || a.type === 'vacation');
    if (other) rt.fail(call, `reject conflicts with an earlier ${other.type}`);
  } else if (rejected) {
    rt.fail(call, `${adding} conflicts with an earlier reject`);
  }
}

function flagCommand(mode: 'set' | 'add' | 'remove'): CommandSpec {
  return {
    ext: ['imap4flags'],
    positional: [['strings'], ['string', 'strings']],
    exec(call, rt) {
      const named = call.positional.length === 2;
      const list = flagList(rt.strings(call.positional[named ? 1 : 0]));
      const varName = named ? rt.literal(call.positional[0]).toLowerCase() : null;
      const current = varName === null ? rt.flags : flagList([rt.variables.get(varName) ?? '']);
      let next: string[];
      if (mode === 'set') next = list;
      else if (mode === 'add') next = flagList([...current, ...list]);
      else {
        const drop = new Set(list.map((f) => f.toLowerCase()));
        next = current.filter((f) => !drop.has(f.toLowerCase()));
      }
      if (varName === null) rt.flags = next;
      else rt.setVariable(call, varName, next.join(' '));
    },
    check(call) {
      if (call.positional.length === 2) checkVariableName(call.positional[0]);
    },
  };
}

function checkVariableName(arg: Call['positional'][number]): void {
  if (arg.kind !== 'list') return;
  const name = arg.items[0].value;
  if (/^[a-zA-Z_][a-zA-Z0-9_]*(\.[a-zA-Z_][a-zA-Z0-9_]*)+$/.test(name)) throw new SieveFault(arg.line, arg.column, `unknown variable namespace in "${name}"`);
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw new SieveFault(arg.line, arg.column, `invalid variable name "${name}"`);
  if (name.length > MAX_VARIABLE_NAME) throw new SieveFault(arg.line, arg.column, `variable name longer than ${MAX_VARIABLE_NAME} characters`);
}

const SET_MODIFIERS: Array<[string, (s: string) => string]> = [
  ['lower', (s) => s.toLowerCase()],
  ['upper', (s) => s.toUpperCase()],
  ['lowerfirst', (s) => s.charAt(0).toLowerCase() + s.slice(1)],
  ['upperfirst', (s) => s.charAt(0).toUpperCase() + s.slice(1)],
  ['quotewildcard', (s) => s.replace(/[*?\\]/g, '\\$&')],
  ['length', (s) => String(Array.from(s).length)],
];

export const COMMANDS: Record<string, CommandSpec> = {
  if: { positional: [[]], tests: 1, block: true, exec: none },
  elsif: { positional: [[]], tests: 1, block: true, exec: none },
  else: { positional: [[]], block: true, exec: none },
  stop: { positional: [[]], exec: none },
  keep: {
    positional: [[]],
    tags: { flags: { arg: 'strings', ext: 'imap4flags' } },
    exec(call, rt) { checkRejectConflict(rt, call, 'keep'); store(rt, call, null, false, false); },
  },
  discard: { positional: [[]], exec(_call, rt) { rt.implicitKeep = false; rt.discarded = true; } },
  redirect: {
    positional: [['string']],
    tags: { copy: { ext: 'copy' } },
    check(call) { constantAddress(call, call.positional[0], 'redirect address'); },
    exec(call, rt) {
      const text = rt.str(call.positional[0]);
      const address = singleAddress(text);
      if (!address) throw new SieveFault(call.line, call.column, `redirect address "${text}" is not a valid address`);
      const copy = call.tags.has('copy');
      if (!copy) checkRejectConflict(rt, call, 'redirect');
      if (!copy) rt.implicitKeep = false;
      if (rt.actions.some((a) => a.type === 'redirect' && a.address.toLowerCase() === address.toLowerCase())) return;
      if (++rt.redirects > rt.limits.maxRedirects) rt.fail(call, `more than ${rt.limits.maxRedirects} redirects`);
      rt.addAction(call, { type: 'redirect', address, copy });
    },
  },
  fileinto: {
    ext: ['fileinto'],
    positional: [['string']],
    tags: { copy: { ext: 'copy' }, flags: { arg: 'strings', ext: 'imap4flags' }, create: { ext: 'mailbox' } },
    exec(call, rt) {
      const folder = rt.str(call.positional[0]);
      if (!folder || folder.includes('\0')) rt.fail(call, `invalid folder name "${folder}"`);
      const copy = call.tags.has('copy');
      checkRejectConflict(rt, call, 'fileinto');
      store(rt, call, folder, copy, call.tags.has('create'));
    },
  },
  reject: { ext: ['reject'], positional: [['string']], exec: (call, rt) => reject(call, rt, false) },
  ereject: { ext: ['ereject'], positional: [['string']], exec: (call, rt) => reject(call, rt, true) },
  vacation: {
    ext: ['vacation'],
    positional: [['string']],
    tags: {
      days: { arg: 'number', group: 'period' },
      seconds: { arg: 'number', group: 'period', ext: 'vacation-seconds' },
      subject: { arg: 'string' },
      from: { arg: 'string' },
      addresses: { arg: 'strings' },
      mime: {},
      handle: { arg: 'string' },
    },
    check(call) { constantAddress(call, call.tags.get('from'), 'vacation :from'); },
    exec(call, rt) {
      if (rt.actions.some((a) => a.type === 'vacation')) rt.fail(call, 'only one vacation action per message');
      checkRejectConflict(rt, call, 'vacation');
      const days = call.tags.get('days');
      const secs = call.tags.get('seconds');
      let seconds = 7 * 86400;
      if (days && days.kind === 'number') seconds = Math.max(1, days.value) * 86400;
      if (secs && secs.kind === 'number') seconds = Math.max(60, secs.value);
      const subjectArg = call.tags.get('subject');
      const fromArg = call.tags.get('from');
      const handleArg = call.tags.get('handle');
      const addressesArg = call.tags.get('addresses');
      const addresses = [rt.input.mailboxAddress, ...(addressesArg ? rt.strings(addressesArg) : [])];
      rt.addAction(call, {
        type: 'vacation',
        reason: rt.str(call.positional[0]),
        ...(subjectArg ? { subject: rt.str(subjectArg) } : {}),
        ...(fromArg ? { from: rt.str(fromArg) } : {}),
        addresses: [...new Set(addresses.filter((a) => a))],
        ...(handleArg ? { handle: rt.str(handleArg) } : {}),
        mime: call.tags.has('mime'),
        seconds,
      });
    },
  },
  setflag: flagCommand('set'),
  addflag: flagCommand('add'),
  removeflag: flagCommand('remove'),
  set: {
    ext: ['variables'],
    positional: [['string', 'string']],
    tags: {
      lower: { group: 'case' }, upper: { group: 'case' },
      lowerfirst: { group: 'first' }, upperfirst: { group: 'first' },
      quotewildcard: {}, length: {},
    },
    check(call, ctx) {
      checkVariableName(call.positional[0]);
      const name = call.positional[0].kind === 'list' ? call.positional[0].items[0].value.toLowerCase() : '';
      ctx.declared.add(name);
      if (ctx.declared.size > LIMITS.maxVariables) throw new SieveFault(call.line, call.column, `more than ${LIMITS.maxVariables} variables`);
    },
    exec(call, rt) {
      let value = rt.str(call.positional[1]);
      for (const [tag, apply] of SET_MODIFIERS) if (call.tags.has(tag)) value = apply(value);
      value = rt.truncate(value);
      // A cut must not leave half of a "\\*" escape behind.
      if (call.tags.has('quotewildcard') && /(^|[^\\])(\\\\)*\\$/.test(value)) value = value.slice(0, -1);
      rt.setVariable(call, rt.literal(call.positional[0]), value);
    },
  },
};

function reject(call: Call, rt: Runtime, ereject: boolean): void {
  if (rt.actions.some((a) => a.type === 'reject')) return;
  checkRejectConflict(rt, call, 'reject');
  rt.implicitKeep = false;
  rt.addAction(call, { type: 'reject', reason: rt.str(call.positional[0]), ereject });
}
