import type { FolderEntry } from '../../emails/folders/index.js';
import { parseFields } from '../../message/mime.js';
import type { Parser } from '../protocol/parser.js';
import { matching, readProgram } from './search.js';
import { ImapBad, type CommandSpec, type Session } from '../protocol/session.js';
import { addressKey, baseSubject, displayKey, sentAt } from './sort-keys.js';

const CRITERIA = new Set(['ARRIVAL', 'CC', 'DATE', 'FROM', 'SIZE', 'SUBJECT', 'TO', 'DISPLAYFROM', 'DISPLAYTO']);
const RETURNS = new Set(['MIN', 'MAX', 'ALL', 'COUNT']);

/** One sort criterion: its key and whether REVERSE came before it. */
interface Criterion { key: string; reverse: boolean }

/** What a message is sorted by: each key's value, read once. */
type Values = Map<string, string | number>;

/** Message numbers in sort order as ESEARCH's ALL gives them: ascending runs as ranges. */
export function orderedSet(nums: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < nums.length;) {
    let j = i;
    while (j + 1 < nums.length && nums[j + 1] === nums[j] + 1) j++;
    parts.push(i === j ? String(nums[i]) : `${nums[i]}:${nums[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The header fields of messages, from their bytes (SORT and THREAD read a handful of them). */
export async function headersOf(s: Session, e: FolderEntry): Promise<{ fields: Array<[string, string]>; size: number } | null> {
  try {
    const raw = await s.raw!(e.id);
    const end = raw.indexOf('\r\n\r\n');
    return { fields: parseFields(raw.toString('utf8', 0, end < 0 ? raw.length : end)), size: raw.length };
  } catch {
    return null; // expunged meanwhile
  }
}

/**
 * SORT / UID SORT (RFC 5256) with ESORT's RETURN options (RFC 5267): the messages the search keys
 * match, ordered by the criteria (REVERSE flips the one after it), ties by sequence number.
 */
async function sort(s: Session, tag: string, p: Parser, uid: boolean): Promise<void> {
  p.sp();
  let ret: Set<string> | null = null;
  if (p.take('RETURN ')) {
    ret = new Set(p.list(() => p.word()));
    for (const r of ret) if (!RETURNS.has(r)) throw new ImapBad(`unknown RETURN option ${r}`);
    if (ret.size === 0) ret.add('ALL');
    p.sp();
  }
  const criteria: Criterion[] = [];
  let reverse = false;
  p.list(() => {
    const w = p.word();
    if (w === 'REVERSE') { reverse = true; return w; }
    if (!CRITERIA.has(w)) throw new ImapBad(`unknown sort criterion ${w}`);
    criteria.push({ key: w, reverse });
    reverse = false;
    return w;
  }, false);
  if (reverse || criteria.length === 0) throw new ImapBad('REVERSE must precede a criterion');
  p.sp();
  const program = readProgram(p, true);
  const v = s.view!;
  const { hits, meta } = await matching(s, program);
  const values = new Map<number, Values>();
  for (const e of hits) {
    const h = await headersOf(s, e);
    const f = (n: string) => h?.fields.find(([k]) => k === n)?.[1];
    const arrival = meta.get(e.id)?.receivedAt ?? 0;
    const m: Values = new Map();
    for (const { key } of criteria) {
      switch (key) {
        case 'ARRIVAL': m.set(key, arrival); break;
        case 'DATE': m.set(key, sentAt(f('date')) ?? arrival); break;
        case 'SIZE': m.set(key, h?.size ?? 0); break;
        case 'SUBJECT': m.set(key, baseSubject(f('subject') ?? '')); break;
        case 'FROM': case 'TO': case 'CC': m.set(key, addressKey(f(key.toLowerCase()))); break;
        case 'DISPLAYFROM': m.set(key, displayKey(f('from'))); break;
        case 'DISPLAYTO': m.set(key, displayKey(f('to'))); break;
      }
    }
    values.set(e.id, m);
  }
  const seq = new Map(hits.map((e) => [e.id, v.seqOf(e)]));
  const sorted = [...hits].sort((a, b) => {
    for (const c of criteria) {
      const x = values.get(a.id)!.get(c.key)!;
      const y = values.get(b.id)!.get(c.key)!;
      const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
      if (d !== 0) return c.reverse ? -d : d;
    }
    return seq.get(a.id)! - seq.get(b.id)!;
  });
  const nums = sorted.map((e) => (uid ? e.uid : seq.get(e.id)!));
  if (ret) {
    const parts = [`(TAG "${tag.replace(/[\\"]/g, '')}")`];
    if (uid) parts.push('UID');
    if (nums.length) {
      if (ret.has('MIN')) parts.push(`MIN ${nums[0]}`);
      if (ret.has('MAX')) parts.push(`MAX ${nums[nums.length - 1]}`);
      if (ret.has('ALL')) parts.push(`ALL ${orderedSet(nums)}`);
    }
    if (ret.has('COUNT')) parts.push(`COUNT ${nums.length}`);
    s.send(`* ESEARCH ${parts.join(' ')}`);
  } else s.send(`* SORT${nums.map((n) => ` ${n}`).join('')}`);
  await s.finish(tag, `${uid ? 'UID ' : ''}SORT completed`);
}

export const sortCommands: Record<string, CommandSpec> = {
  SORT: { states: ['selected'], uid: true, run: (s, tag, p, o) => sort(s, tag, p, o.uid) },
};
