import addressparser from 'nodemailer/lib/addressparser';
import { ftsMatch } from '../../emails/fts.js';
import type { FolderEntry, MessageMeta } from '../../emails/folders/index.js';
import { parseFields } from '../../message/mime.js';
import { formatSet, MONTHS, type Parser, type SeqRange, type SeqSet } from '../protocol/parser.js';
import { ImapBad, ImapNo, type CommandSpec, type Session } from '../protocol/session.js';
import { canonicalFlag } from './store.js';

/** A parsed search key (RFC 9051 6.4.4). */
export type Key =
  | { op: 'all' }
  | { op: 'and'; keys: Key[] }
  | { op: 'or'; a: Key; b: Key }
  | { op: 'not'; k: Key }
  | { op: 'flag'; flag: string; has: boolean }
  | { op: 'set'; set: SeqSet | '$'; uid: boolean }
  | { op: 'size'; larger: boolean; n: number }
  | { op: 'date'; sent: boolean; cmp: 'before' | 'on' | 'since'; day: number }
  | { op: 'age'; older: boolean; seconds: number }
  | { op: 'header'; name: string; value: string }
  | { op: 'fts'; match: string | null; empty: boolean; text: string; body: boolean }
  | { op: 'modseq'; n: number }
  | { op: 'recent' };

const DAY = 86_400_000;
const MAX_DEPTH = 50;

function readKey(p: Parser, depth: number): Key {
  if (depth > MAX_DEPTH) throw new ImapBad('search too deeply nested');
  const c = p.peek();
  if (c === 0x28) return { op: 'and', keys: p.list(() => readKey(p, depth + 1), false) };
  if ((c >= 0x30 && c <= 0x39) || c === 0x2a || c === 0x24) return { op: 'set', set: p.seqSet(), uid: false };
  const w = p.word();
  const arg = () => { p.sp(); return p.astring(); };
  const flag = (f: string, has: boolean): Key => ({ op: 'flag', flag: f, has });
  const date = (sent: boolean, cmp: 'before' | 'on' | 'since'): Key => { p.sp(); return { op: 'date', sent, cmp, day: p.date() }; };
  switch (w) {
    case 'ALL': return { op: 'all' };
    case 'ANSWERED': return flag('\\Answered', true);
    case 'UNANSWERED': return flag('\\Answered', false);
    case 'DELETED': return flag('\\Deleted', true);
    case 'UNDELETED': return flag('\\Deleted', false);
    case 'DRAFT': return flag('\\Draft', true);
    case 'UNDRAFT': return flag('\\Draft', false);
    case 'FLAGGED': return flag('\\Flagged', true);
    case 'UNFLAGGED': return flag('\\Flagged', false);
    case 'SEEN': return flag('\\Seen', true);
    case 'UNSEEN': return flag('\\Seen', false);
    case 'RECENT': return { op: 'recent' };
    case 'OLD': return { op: 'not', k: { op: 'recent' } };
    case 'NEW': return { op: 'and', keys: [{ op: 'recent' }, flag('\\Seen', false)] };
    case 'KEYWORD': { p.sp(); return flag(canonicalFlag(p.flag()), true); }
    case 'UNKEYWORD': { p.sp(); return flag(canonicalFlag(p.flag()), false); }
    case 'BEFORE': return date(false, 'before');
    case 'ON': return date(false, 'on');
    case 'SINCE': return date(false, 'since');
    case 'SENTBEFORE': return date(true, 'before');
    case 'SENTON': return date(true, 'on');
    case 'SENTSINCE': return date(true, 'since');
    case 'OLDER': case 'YOUNGER': { p.sp(); return { op: 'age', older: w === 'OLDER', seconds: p.nzNumber() }; }
    case 'LARGER': case 'SMALLER': { p.sp(); return { op: 'size', larger: w === 'LARGER', n: p.number() }; }
    case 'FROM': case 'TO': case 'CC': case 'BCC': case 'SUBJECT': return { op: 'header', name: w.toLowerCase(), value: arg() };
    case 'HEADER': { p.sp(); const name = p.astring().toLowerCase(); return { op: 'header', name, value: arg() }; }
    case 'BODY': case 'TEXT': {
      const text = arg();
      const match = ftsMatch(text);
      return { op: 'fts', match: match && w === 'BODY' ? `body : (${match})` : match, empty: text.trim() === '', text, body: w === 'BODY' };
    }
    case 'UID': { p.sp(); return { op: 'set', set: p.seqSet(), uid: true }; }
    case 'NOT': { p.sp(); return { op: 'not', k: readKey(p, depth + 1) }; }
    case 'OR': { p.sp(); const a = readKey(p, depth + 1); p.sp(); return { op: 'or', a, b: readKey(p, depth + 1) }; }
    case 'MODSEQ': {
      p.sp();
      // Optional entry name and type (per-flag modseqs are not kept: the message's is used).
      if (p.isString()) { p.string(); p.sp(); p.word(); p.sp(); }
      return { op: 'modseq', n: p.modseq() };
    }
    default: throw new ImapBad(`unknown search key ${w}`);
  }
}

/** RFC 2047 encoded words decoded (for matching header text as a user reads it). */
export function decodeWords(s: string): string {
  return s.replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (all, charset: string, enc: string, text: string) => {
    try {
      const bytes = enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64')
        : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1');
      return new TextDecoder(charset.split('*')[0]).decode(bytes);
    } catch {
      return all;
    }
  });
}

/**
 * The day a Date header names, in its own time zone (SENTBEFORE/SENTON/SENTSINCE compare the date
 * as written, RFC 9051 6.4.4), as UTC midnight of that day; NaN when it names none.
 */
function ownDate(value: string): number {
  const m = /(\d{1,2})\s+([A-Za-z]{3})[a-z]*\s+(\d{2,4})/.exec(value);
  const month = m ? MONTHS.indexOf(m[2][0].toUpperCase() + m[2].slice(1, 3).toLowerCase()) : -1;
  if (!m || month < 0) {
    const t = Date.parse(value);
    return Number.isNaN(t) ? NaN : Math.floor(t / DAY) * DAY;
  }
  let year = Number(m[3]);
  if (m[3].length === 2) year += year < 50 ? 2000 : 1900; // RFC 5322 4.3 obsolete two-digit years
  return Date.UTC(year, month, Number(m[1]));
}

const ADDRESS_FIELDS = new Set(['from', 'to', 'cc', 'bcc', 'sender', 'reply-to']);

/** An address field as its addresses (`name <local@domain>`), comments and folding gone, lower case. */
function addressText(value: string): string {
  try {
    const flat = (list: Array<{ name?: string; address?: string; group?: unknown[] }>): string[] =>
      list.flatMap((a) => (a.group ? flat(a.group as typeof list) : [`${a.name ?? ''} <${a.address ?? ''}>`]));
    return flat(addressparser(value)).join(', ').toLowerCase();
  } catch {
    return '';
  }
}

/** Per-message facts a key may need, read on first use. */
interface Facts { e: FolderEntry; seq: number; meta: MessageMeta | undefined; headers: () => Promise<Array<[string, string]>>; size: () => Promise<number> }

async function test(k: Key, f: Facts, ctx: { fts: Map<Key, Set<number>>; maxUid: number; saved: number[]; now: number; total: number; recent: Set<number> }): Promise<boolean> {
  switch (k.op) {
    case 'all': return true;
    case 'and': { for (const x of k.keys) if (!(await test(x, f, ctx))) return false; return true; }
    case 'or': return (await test(k.a, f, ctx)) || test(k.b, f, ctx);
    case 'not': return !(await test(k.k, f, ctx));
    case 'flag': {
      const has = k.flag === '\\Seen' ? f.e.read : ` ${f.e.flags} `.includes(` ${k.flag} `);
      return has === k.has;
    }
    case 'set': {
      if (k.set === '$') return ctx.saved.includes(f.e.uid);
      const n = k.uid ? f.e.uid : f.seq;
      const max = k.uid ? ctx.maxUid : ctx.total;
      return k.set.some((r) => { const a = r.from === Infinity ? max : r.from; const b = r.to === Infinity ? max : r.to; return n >= Math.min(a, b) && n <= Math.max(a, b); });
    }
    case 'size': { const n = await f.size(); return k.larger ? n > k.n : n < k.n; }
    case 'age': { const age = (ctx.now - (f.meta?.receivedAt ?? 0)) / 1000; return k.older ? age >= k.seconds : age <= k.seconds; }
    case 'date': {
      let t: number;
      if (k.sent) {
        const d = (await f.headers()).find(([n]) => n === 'date')?.[1];
        t = d ? ownDate(d) : NaN;
        if (Number.isNaN(t)) return false;
      } else t = f.meta?.receivedAt ?? 0;
      const day = Math.floor(t / DAY) * DAY;
      return k.cmp === 'before' ? day < k.day : k.cmp === 'on' ? day === k.day : day >= k.day;
    }
    case 'header': {
      const want = k.value.toLowerCase();
      const seen = (v: string) => decodeWords(v).toLowerCase().includes(want) || v.toLowerCase().includes(want)
        || (ADDRESS_FIELDS.has(k.name) && addressText(v).includes(want));
      return (await f.headers()).some(([n, v]) => n === k.name && (want === '' || seen(v)));
    }
    case 'fts': return k.empty || (ctx.fts.get(k)?.has(f.e.id) ?? false);
    case 'modseq': return f.e.modseq >= k.n;
    case 'recent': return ctx.recent.has(f.e.uid);
  }
}

function ftsKeys(k: Key, out: Array<Extract<Key, { op: 'fts' }>>): void {
  if (k.op === 'fts') out.push(k);
  else if (k.op === 'and') k.keys.forEach((x) => ftsKeys(x, out));
  else if (k.op === 'or') { ftsKeys(k.a, out); ftsKeys(k.b, out); } else if (k.op === 'not') ftsKeys(k.k, out);
}

const usesModseq = (k: Key): boolean =>
  k.op === 'modseq' || (k.op === 'and' && k.keys.some(usesModseq)) || (k.op === 'or' && (usesModseq(k.a) || usesModseq(k.b))) || (k.op === 'not' && usesModseq(k.k));

/** Search keys to the end of the command, after `CHARSET x` (SEARCH) or a bare charset (SORT, THREAD). */
export function readProgram(p: Parser, bareCharset: boolean): Key {
  if (bareCharset || p.take('CHARSET ')) {
    const cs = p.astring().toUpperCase();
    if (cs !== 'UTF-8' && cs !== 'US-ASCII') throw new ImapNo('only UTF-8 and US-ASCII', 'BADCHARSET (UTF-8 US-ASCII)');
    p.sp();
  }
  const keys: Key[] = [readKey(p, 0)];
  while (p.maybeSp()) keys.push(readKey(p, 0));
  p.end();
  return { op: 'and', keys };
}

/** The messages of the selected folder a program matches, in UID order (after announcing what changed). */
export async function matching(s: Session, program: Key, sync = true): Promise<{ hits: FolderEntry[]; meta: Map<number, MessageMeta> }> {
  const v = s.view!;
  const messages = s.store.messages;
  if (sync) await s.sync();
  const all = v.entries;
  const ids = all.map((e) => e.id);
  const fts = new Map<Key, Set<number>>();
  const wanted: Array<Extract<Key, { op: 'fts' }>> = [];
  ftsKeys(program, wanted);
  for (const k of wanted) {
    // Whole words through the full-text index, then substrings (RFC 9051) among the rest.
    const found = k.match === null ? new Set<number>() : await messages.ftsMatching(k.match, ids);
    for (const id of await messages.containing(ids.filter((id) => !found.has(id)), k.text, !k.body)) found.add(id);
    fts.set(k, found);
  }
  const meta = await messages.meta(s.login!.mailboxId, ids);
  const ctx = { fts, maxUid: v.maxUid, saved: s.saved, now: Date.now(), total: all.length, recent: v.recent };
  const hits: FolderEntry[] = [];
  for (const [i, e] of all.entries()) {
    // Expunged elsewhere and not yet announced: gone, so never a hit (not even of NOT), whose
    // absence the answer's [EXPUNGEISSUED] explains.
    if (v.isGone(e.id)) continue;
    let raw: Buffer | null = null;
    const load = async () => (raw ??= await s.raw!(e.id));
    const facts: Facts = {
      e, seq: i + 1, meta: meta.get(e.id),
      headers: async () => { const r = await load(); const end = r.indexOf('\r\n\r\n'); return parseFields(r.toString('utf8', 0, end < 0 ? r.length : end)); },
      size: async () => (await load()).length,
    };
    try {
      if (await test(program, facts, ctx)) hits.push(e);
    } catch {
      // A message expunged while searching is not a hit.
    }
  }
  return { hits, meta };
}

/** SEARCH / UID SEARCH, with ESEARCH's RETURN options and SEARCHRES's SAVE. */
async function search(s: Session, tag: string, p: Parser, uid: boolean): Promise<void> {
  p.sp();
  let ret: Set<string> | null = null;
  let partial = null as SeqRange | null; // set inside the list's callback
  if (p.take('RETURN ')) {
    ret = new Set(p.list(() => {
      const w = p.word();
      // PARTIAL m:n (CONTEXT=SEARCH): the m-th to n-th of the result.
      if (w === 'PARTIAL') { p.sp(); const a = p.nzNumber(); p.expect(':'); const b = p.nzNumber(); partial = { from: Math.min(a, b), to: Math.max(a, b) }; }
      return w;
    }));
    for (const r of ret) if (!['MIN', 'MAX', 'ALL', 'COUNT', 'SAVE', 'UPDATE', 'PARTIAL'].includes(r)) throw new ImapBad(`unknown RETURN option ${r}`);
    if (ret.size === 0) ret.add('ALL');
    p.sp();
  }
  const program = readProgram(p, false);
  const v = s.view!;
  const { hits } = await matching(s, program);
  const nums = hits.map((e) => (uid ? e.uid : i1(v.entries, e)));
  const modseq = usesModseq(program) && hits.length ? Math.max(...hits.map((e) => e.modseq)) : null;
  if (modseq !== null) s.enableCondstore();
  if (ret?.has('SAVE')) s.saved = hits.map((e) => e.uid);
  if (ret || s.rev2) {
    const r = ret ?? new Set(['ALL']);
    const parts = [`(TAG "${tag.replace(/[\\"]/g, '')}")`];
    if (uid) parts.push('UID');
    if (nums.length) {
      if (r.has('MIN')) parts.push(`MIN ${Math.min(...nums)}`);
      if (r.has('MAX')) parts.push(`MAX ${Math.max(...nums)}`);
      if (r.has('ALL')) parts.push(`ALL ${formatSet(nums)}`);
    }
    if (r.has('COUNT')) parts.push(`COUNT ${nums.length}`);
    if (partial) {
      const picked = nums.slice(partial.from - 1, partial.to);
      parts.push(`PARTIAL (${partial.from}:${partial.to} ${picked.length ? formatSet(picked) : 'NIL'})`);
    }
    if (r.has('UPDATE')) s.liveSearches.set(tag, { tag, program, uid, uids: hits.map((e) => e.uid) });
    // With only MIN and/or MAX the MODSEQ is the highest of the messages returned (RFC 7162 3.1.5).
    const returned = r.has('ALL') || r.has('COUNT') ? hits : [...(r.has('MIN') ? [hits[0]] : []), ...(r.has('MAX') ? [hits[hits.length - 1]] : [])];
    if (modseq !== null) parts.push(`MODSEQ ${Math.max(...returned.map((e) => e.modseq))}`);
    if (!(r.size === 1 && r.has('SAVE'))) s.send(`* ESEARCH ${parts.join(' ')}`);
  } else {
    s.send(`* SEARCH${nums.map((n) => ` ${n}`).join('')}${modseq !== null ? ` (MODSEQ ${modseq})` : ''}`);
  }
  // Messages expunged elsewhere and not yet announced may be left out: the client is told so.
  await s.finish(tag, `${s.view?.expungePending ? '[EXPUNGEISSUED] ' : ''}${uid ? 'UID ' : ''}SEARCH completed`);
}

const i1 = (entries: FolderEntry[], e: FolderEntry) => entries.indexOf(e) + 1;

export const searchCommands: Record<string, CommandSpec> = {
  SEARCH: { states: ['selected'], uid: true, run: (s, tag, p, o) => search(s, tag, p, o.uid) },
};


