import type { FolderEntry } from '../../emails/folders/index.js';
import type { Parser } from '../protocol/parser.js';
import { matching, readProgram } from './search.js';
import { ImapBad, type CommandSpec, type Session } from '../protocol/session.js';
import { headersOf } from './sort.js';
import { baseSubject, sentAt } from './sort-keys.js';

/** What threading reads of a message. */
interface Msg { n: number; date: number; subject: string; reply: boolean; id: string | null; refs: string[] }

/** A node of the thread tree: a message, or a dummy standing for one referred to but not here. */
interface Node { msg: Msg | null; parent: Node | null; children: Node[] }

const MSGID = /<[^<>\s]+>/g;
const ids = (v: string | undefined) => (v ?? '').match(MSGID) ?? [];

function unlink(n: Node): void {
  if (n.parent) n.parent.children = n.parent.children.filter((c) => c !== n);
  n.parent = null;
}
function link(parent: Node, child: Node): void {
  unlink(child);
  child.parent = parent;
  parent.children.push(child);
}
/** Whether `to` is `from` or one of its ancestors (linking `to` under `from` would make a loop). */
function reaches(from: Node, to: Node): boolean {
  for (let n: Node | null = from; n; n = n.parent) if (n === to) return true;
  return false;
}

/** A thread's date: its message's, or its first child's for a dummy (RFC 5256 REFERENCES step 4). */
const dateOf = (n: Node): number => n.msg?.date ?? (n.children[0] ? dateOf(n.children[0]) : 0);
const order = (a: Node, b: Node) => dateOf(a) - dateOf(b) || (a.msg?.n ?? first(a)) - (b.msg?.n ?? first(b));
const first = (n: Node): number => n.msg?.n ?? (n.children[0] ? first(n.children[0]) : 0);

/** THREAD=REFERENCES (RFC 5256 section 4): parents from References/In-Reply-To, then by base subject. */
function references(msgs: Msg[]): Node[] {
  const table = new Map<string, Node>();
  const node = (id: string) => { let c = table.get(id); if (!c) table.set(id, (c = { msg: null, parent: null, children: [] })); return c; };
  const all: Node[] = [];
  for (const m of msgs) {
    let own: Node;
    if (m.id && table.has(m.id) && !table.get(m.id)!.msg) own = table.get(m.id)!;
    else if (m.id && !table.has(m.id)) own = node(m.id);
    else own = { msg: null, parent: null, children: [] }; // no or a duplicate Message-ID: a node of its own
    own.msg = m;
    all.push(own);
    const chain = m.refs.map(node);
    for (let i = 1; i < chain.length; i++) {
      if (!chain[i].parent && !reaches(chain[i - 1], chain[i]) && chain[i] !== own) link(chain[i - 1], chain[i]);
    }
    // The last reference is the parent (a parent from another's References goes first), unless that makes a loop.
    const last = chain[chain.length - 1];
    unlink(own);
    if (last && last !== own && !reaches(last, own)) link(last, own);
  }
  for (const c of table.values()) if (!all.includes(c)) all.push(c);
  let roots = all.filter((n) => !n.parent);
  // Dummies go: an empty one entirely, one with children gives them its place (a root keeps a dummy with several).
  const prune = (list: Node[], atRoot: boolean): Node[] => list.flatMap((n) => {
    n.children = prune(n.children, false);
    for (const c of n.children) c.parent = n;
    if (n.msg) return [n];
    if (n.children.length === 0) return [];
    if (atRoot && n.children.length > 1) return [n];
    for (const c of n.children) c.parent = atRoot ? null : n.parent;
    return n.children;
  });
  roots = prune(roots, true);
  const sortTree = (list: Node[]) => { for (const n of list) sortTree(n.children); list.sort(order); };
  sortTree(roots);
  // Threads with the same base subject are gathered (step 5).
  const subjectOf = (n: Node) => n.msg ?? n.children[0]?.msg ?? null;
  const bySubject = new Map<string, Node>();
  for (const r of roots) {
    const m = subjectOf(r);
    if (!m || m.subject === '') continue;
    const old = bySubject.get(m.subject);
    if (!old || (!r.msg && old.msg) || (old.msg && subjectOf(old)!.reply && !m.reply)) bySubject.set(m.subject, r);
  }
  const out: Node[] = [];
  for (const r of roots) {
    const m = subjectOf(r);
    const head = m && m.subject !== '' ? bySubject.get(m.subject) : undefined;
    if (!head || head === r) { out.push(r); continue; }
    if (!head.msg && !r.msg) { for (const c of [...r.children]) link(head, c); } else if (!head.msg) link(head, r);
    else if (m!.reply && !subjectOf(head)!.reply) link(head, r);
    else {
      const dummy: Node = { msg: null, parent: null, children: [] };
      const at = out.indexOf(head);
      link(dummy, head);
      link(dummy, r);
      if (at >= 0) out[at] = dummy;
      bySubject.set(m!.subject, dummy);
    }
  }
  sortTree(out);
  return out;
}

/** THREAD=ORDEREDSUBJECT (RFC 5256 section 3): by base subject, then date; the first of each is the parent of the rest. */
function orderedSubject(msgs: Msg[]): Node[] {
  const sorted = [...msgs].sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : a.date - b.date || a.n - b.n));
  const threads: Node[] = [];
  let head: Node | null = null;
  for (const m of sorted) {
    const n: Node = { msg: m, parent: null, children: [] };
    if (head && head.msg!.subject === m.subject) link(head, n);
    else threads.push((head = n));
  }
  return threads.sort(order);
}

/** A thread as RFC 5256 writes it: a chain as "a b c", siblings as "(b ...)(c ...)". */
function render(n: Node): string {
  const self = n.msg ? String(n.msg.n) : '';
  if (n.children.length === 0) return self;
  if (n.children.length === 1 && n.msg) return `${self} ${render(n.children[0])}`;
  return `${self}${self ? ' ' : ''}${n.children.map((c) => `(${render(c)})`).join('')}`;
}

/** THREAD / UID THREAD (RFC 5256) over the messages the search keys match. */
async function thread(s: Session, tag: string, p: Parser, uid: boolean): Promise<void> {
  p.sp();
  const algorithm = p.atom().toUpperCase();
  if (algorithm !== 'REFERENCES' && algorithm !== 'ORDEREDSUBJECT') throw new ImapBad(`unknown threading algorithm ${algorithm}`);
  p.sp();
  const program = readProgram(p, true);
  const v = s.view!;
  const { hits, meta } = await matching(s, program);
  const msgs: Msg[] = [];
  for (const e of hits as FolderEntry[]) {
    const h = await headersOf(s, e);
    const f = (name: string) => h?.fields.find(([k]) => k === name)?.[1];
    const subject = f('subject') ?? '';
    const refs = ids(f('references'));
    msgs.push({
      n: uid ? e.uid : v.seqOf(e), date: sentAt(f('date')) ?? meta.get(e.id)?.receivedAt ?? 0,
      subject: baseSubject(subject), reply: /^\s*(re|fwd?)\s*(\[[^\]]*\])?\s*:/i.test(subject) || /\(fwd\)\s*$/i.test(subject),
      id: ids(f('message-id'))[0] ?? null, refs: refs.length ? refs : ids(f('in-reply-to')).slice(0, 1),
    });
  }
  const threads = algorithm === 'REFERENCES' ? references(msgs) : orderedSubject(msgs);
  s.send(`* THREAD ${threads.map((t) => `(${render(t)})`).join('')}`);
  await s.finish(tag, `${uid ? 'UID ' : ''}THREAD completed`);
}

export const threadCommands: Record<string, CommandSpec> = {
  THREAD: { states: ['selected'], uid: true, run: (s, tag, p, o) => thread(s, tag, p, o.uid) },
};
