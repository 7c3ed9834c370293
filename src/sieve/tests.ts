// Tests: RFC 5228 5 (address, allof, anyof, envelope, exists, false, header, not, size, true), body (RFC 5173),
// date/currentdate (RFC 5260), string (RFC 5229), hasflag (RFC 5232), mailboxexists (RFC 5490),
// spamtest/spamtestplus (RFC 5235).
import { SieveFault, type Call } from './ast.js';
import type { TestSpec } from './spec.js';
import type { Runtime } from './runtime.js';
import { flagList } from './runtime.js';
import { ADDRESS_PART_TAGS, INDEX_TAGS, MATCHING } from './tags.js';
import { addressesOf, addressPart, normalizeEnvelopePath, type AddressPart } from './address.js';
import { DATE_PARTS, datePart, localOffset, parseRfc5322Date, parseZone, type ZonedDate } from './date.js';
import { bodyValues } from './body.js';

function partOf(call: Call): AddressPart {
  for (const p of ['localpart', 'domain', 'user', 'detail'] as const) if (call.tags.has(p)) return p;
  return 'all';
}

/** Header values of a name, narrowed by :index/:last (RFC 5260 6). */
function indexed<T>(call: Call, values: T[]): T[] {
  const idx = call.tags.get('index');
  if (!idx || idx.kind !== 'number') return values;
  const n = idx.value;
  const pick = call.tags.has('last') ? values[values.length - n] : values[n - 1];
  return pick === undefined ? [] : [pick];
}

/** Header names are checked at run time: an invalid name (e.g. "subject:") names no header and matches nothing. */
function checkHeaderNames(_arg: Call['positional'][number]): void {}

function zoneTarget(call: Call, rt: Runtime, original: number, at: number): number | null {
  const zone = call.tags.get('zone');
  if (zone) return parseZone(rt.str(zone));
  if (call.tags.has('originalzone')) return original;
  return localOffset(at);
}

function checkDatePart(arg: Call['positional'][number]): void {
  if (arg.kind === 'list' && !arg.items[0].value.includes('${') && !DATE_PARTS.has(arg.items[0].value.toLowerCase())) {
    throw new SieveFault(arg.line, arg.column, `unknown date part "${arg.items[0].value}"`);
  }
}

function checkZone(call: Call): void {
  const zone = call.tags.get('zone');
  if (zone && zone.kind === 'list' && !zone.items[0].value.includes('${') && parseZone(zone.items[0].value) === null) {
    throw new SieveFault(zone.line, zone.column, `invalid time zone "${zone.items[0].value}"`);
  }
}

const ENVELOPE_PARTS = new Set(['from', 'to', 'auth', 'orig_to']);

export const TESTS: Record<string, TestSpec> = {
  true: { positional: [[]], evaluate: () => true },
  false: { positional: [[]], evaluate: () => false },
  not: { positional: [[]], tests: 'one', evaluate: (call, rt) => !rt.evaluate(call.tests[0]) },
  allof: { positional: [[]], tests: 'list', evaluate: (call, rt) => call.tests.every((t) => rt.evaluate(t)) },
  anyof: { positional: [[]], tests: 'list', evaluate: (call, rt) => call.tests.some((t) => rt.evaluate(t)) },
  exists: {
    positional: [['strings']],
    check: (call) => checkHeaderNames(call.positional[0]),
    evaluate: (call, rt) => rt.strings(call.positional[0]).every((h) => rt.message.has(h)),
  },
  size: {
    positional: [['number']],
    tags: { over: { group: 'size' }, under: { group: 'size' } },
    check(call) {
      if (!call.tags.has('over') && !call.tags.has('under')) throw new SieveFault(call.line, call.column, 'size needs :over or :under');
    },
    evaluate(call, rt) {
      const limit = call.positional[0].kind === 'number' ? call.positional[0].value : 0;
      return call.tags.has('over') ? rt.message.size > limit : rt.message.size < limit;
    },
  },
  header: {
    positional: [['strings', 'strings']],
    tags: { ...MATCHING, ...INDEX_TAGS },
    check: (call) => checkHeaderNames(call.positional[0]),
    evaluate(call, rt) {
      const names = rt.strings(call.positional[0]);
      // One header name (the usual case): its values as they are, without gathering them into a new list.
      const values = names.length === 1 ? indexed(call, rt.message.values(names[0]!)) : names.flatMap((h) => indexed(call, rt.message.values(h)));
      return rt.matchValues(call, values, rt.strings(call.positional[1]));
    },
  },
  address: {
    positional: [['strings', 'strings']],
    tags: { ...MATCHING, ...ADDRESS_PART_TAGS, ...INDEX_TAGS },
    check: (call) => checkHeaderNames(call.positional[0]),
    evaluate(call, rt) {
      const part = partOf(call);
      const values: string[] = [];
      for (const h of rt.strings(call.positional[0])) {
        for (const field of indexed(call, rt.message.values(h))) {
          let list = rt.message.addressCache.get(field);
          if (!list) { list = addressesOf(field); rt.message.addressCache.set(field, list); }
          for (const a of list) {
            const p = addressPart(a, part, rt.detailSeparators);
            if (p !== null) values.push(p);
          }
        }
      }
      return rt.matchValues(call, values, rt.strings(call.positional[1]));
    },
  },
  envelope: {
    ext: ['envelope'],
    positional: [['strings', 'strings']],
    tags: { ...MATCHING, ...ADDRESS_PART_TAGS },
    check(call) {
      const arg = call.positional[0];
      if (arg.kind !== 'list') return;
      for (const s of arg.items) {
        if (!s.value.includes('${') && !ENVELOPE_PARTS.has(s.value.toLowerCase())) {
          throw new SieveFault(s.line, s.column, `unknown envelope part "${s.value}"`);
        }
      }
    },
    evaluate(call, rt) {
      const part = partOf(call);
      const values: string[] = [];
      for (const name of rt.strings(call.positional[0])) {
        for (const path of rt.hooks.envelope(name.toLowerCase(), rt.input) ?? []) {
          const address = normalizeEnvelopePath(path);
          if (address === null) continue;
          // The null reverse-path matches "" whatever the address part (RFC 5228 5.4).
          if (address === '') { values.push(''); continue; }
          // A path without a domain (e.g. <MAILER-DAEMON>) still has its whole and local part.
          if (!address.includes('@')) {
            if (part === 'all' || part === 'localpart') values.push(address);
            continue;
          }
          const p = addressPart(address, part, rt.detailSeparators);
          if (p !== null) values.push(p);
        }
      }
      return rt.matchValues(call, values, rt.strings(call.positional[1]));
    },
  },
  body: {
    ext: ['body'],
    positional: [['strings']],
    tags: { ...MATCHING, raw: { group: 'transform' }, content: { arg: 'strings', group: 'transform' }, text: { group: 'transform' } },
    evaluate(call, rt) {
      const content = call.tags.get('content');
      const mode = call.tags.has('raw') ? 'raw' : content ? 'content' : 'text';
      const values = bodyValues(rt.message, mode, content ? rt.strings(content) : []);
      // The body test leaves match variables alone (RFC 5173 does not give it any), as Pigeonhole does.
      return rt.matchValues(call, values, rt.strings(call.positional[0]), false);
    },
  },
  date: {
    ext: ['date'],
    positional: [['string', 'string', 'strings']],
    tags: { ...MATCHING, ...INDEX_TAGS, zone: { arg: 'string', group: 'zone' }, originalzone: { group: 'zone' } },
    check(call) { checkHeaderNames(call.positional[0]); checkDatePart(call.positional[1]); checkZone(call); },
    evaluate(call, rt) {
      const header = rt.str(call.positional[0]);
      const part = rt.str(call.positional[1]);
      const values: string[] = [];
      for (const raw of indexed(call, rt.message.values(header))) {
        const text = header.toLowerCase() === 'received' ? raw.slice(raw.lastIndexOf(';') + 1) : raw;
        const parsed = parseRfc5322Date(text);
        if (!parsed) continue;
        const offset = zoneTarget(call, rt, parsed.offset, parsed.utc);
        if (offset === null) continue;
        const v = datePart({ utc: parsed.utc, offset }, part);
        if (v !== null) values.push(v);
      }
      return rt.matchValues(call, values, rt.strings(call.positional[2]));
    },
  },
  currentdate: {
    ext: ['date'],
    positional: [['string', 'strings']],
    tags: { ...MATCHING, zone: { arg: 'string' } },
    check(call) { checkDatePart(call.positional[0]); checkZone(call); },
    evaluate(call, rt) {
      const utc = rt.input.now.getTime();
      const offset = zoneTarget(call, rt, localOffset(utc), utc);
      if (offset === null) return false;
      const now: ZonedDate = { utc, offset };
      const v = datePart(now, rt.str(call.positional[0]));
      return rt.matchValues(call, v === null ? [] : [v], rt.strings(call.positional[1]));
    },
  },
  string: {
    ext: ['variables'],
    positional: [['strings', 'strings']],
    tags: MATCHING,
    evaluate(call, rt) {
      let values = rt.strings(call.positional[0]);
      if (call.tags.has('count')) values = values.filter((v) => v !== '');
      return rt.matchValues(call, values, rt.strings(call.positional[1]));
    },
  },
  hasflag: {
    ext: ['imap4flags'],
    positional: [['strings'], ['strings', 'strings']],
    tags: MATCHING,
    evaluate(call, rt) {
      const named = call.positional.length === 2;
      const flags = named
        ? flagList(rt.strings(call.positional[0]).map((n) => rt.variables.get(n.toLowerCase()) ?? ''))
        : rt.flags;
      const keys = rt.strings(call.positional[named ? 1 : 0]);
      const m = rt.matcher(call);
      return rt.matchValues(call, flags, m.type === 'count' ? keys : flagList(keys));
    },
  },
  mailboxexists: {
    ext: ['mailbox'],
    positional: [['strings']],
    evaluate: (call, rt) => rt.strings(call.positional[0]).every((f) => f.toUpperCase() === 'INBOX' || rt.input.folderExists(f)),
  },
  spamtest: {
    ext: ['spamtest'],
    positional: [['string']],
    tags: { ...MATCHING, percent: { ext: 'spamtestplus' } },
    evaluate(call, rt) {
      const value = rt.hooks.spamtest(call.tags.has('percent'), rt);
      return rt.matchValues(call, [value], rt.strings(call.positional[0]));
    },
  },
};
