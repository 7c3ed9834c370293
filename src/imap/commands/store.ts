import { targets } from './fetch.js';
import { formatSet, type Parser } from '../protocol/parser.js';
import { ImapBad, ImapNo, type CommandSpec, type Session } from '../protocol/session.js';

const SYSTEM = new Map(['\\answered', '\\flagged', '\\deleted', '\\seen', '\\draft'].map((f) => [f, '\\' + f[1].toUpperCase() + f.slice(2)]));
const MAX_KEYWORDS = 64;

/** A flag in its stored spelling: system flags capitalised as the RFC writes them; keywords as given. */
export function canonicalFlag(f: string): string {
  if (f.startsWith('\\')) {
    const sys = SYSTEM.get(f.toLowerCase());
    if (!sys) throw new ImapBad(`unknown system flag ${f}`);
    return sys;
  }
  if (f.length > 100) throw new ImapBad('keyword too long');
  return f;
}

/** Reads a flag list or a single flag (STORE accepts both). */
export function readFlags(p: Parser): string[] {
  const flags = p.peek() === 0x28 ? p.list(() => p.flag()) : [p.flag()];
  return flags.map(canonicalFlag).filter((f) => f !== '\\Recent');
}

/**
 * STORE / UID STORE (RFC 9051 6.4.6, CONDSTORE's UNCHANGEDSINCE): \Seen is the email's read
 * state (setting it is POST /v1/emails/{id}/read with its email.read event); the other flags are
 * stored with the message. Every change takes a new MODSEQ.
 */
async function store(s: Session, tag: string, p: Parser, uid: boolean): Promise<void> {
  p.sp();
  const set = p.seqSet();
  p.sp();
  let unchangedSince: number | undefined;
  if (p.peek() === 0x28) {
    p.list(() => {
      const w = p.word();
      if (w !== 'UNCHANGEDSINCE') throw new ImapBad(`unknown STORE modifier ${w}`);
      p.sp();
      unchangedSince = p.modseq();
      return w;
    }, false);
    p.sp();
  }
  const sign = p.take('+') ? '+' : p.take('-') ? '-' : '';
  const op = sign + p.word();
  const m = /^([+-]?)FLAGS(\.SILENT)?$/.exec(op);
  if (!m) throw new ImapBad('FLAGS, +FLAGS or -FLAGS expected');
  p.sp();
  const flags = readFlags(p);
  p.end();
  const v = s.view!;
  if (v.readOnly) throw new ImapNo('the folder is open read-only', 'READ-ONLY');
  if (unchangedSince !== undefined) s.enableCondstore();
  await s.sync();
  const list = targets(s, set, uid);
  const seen = flags.includes('\\Seen');
  const others = flags.filter((f) => f !== '\\Seen');
  const modified: number[] = [];
  const writes: Array<{ id: number; flags: string }> = [];
  const read: number[] = [];
  const unread: number[] = [];
  for (const e of list) {
    if (unchangedSince !== undefined && e.modseq > unchangedSince) { modified.push(uid ? e.uid : v.seqOf(e)); continue; }
    const current = new Set(e.flags === '' ? [] : e.flags.split(' '));
    let next: Set<string>;
    let nextSeen = e.read;
    if (m[1] === '+') { next = new Set([...current, ...others]); if (seen) nextSeen = true; } else if (m[1] === '-') { next = new Set([...current].filter((f) => !others.includes(f))); if (seen) nextSeen = false; } else { next = new Set(others); nextSeen = seen; }
    if (next.size > MAX_KEYWORDS) throw new ImapNo('too many flags on one message', 'LIMIT');
    const text = [...next].join(' ');
    if (text !== e.flags) writes.push({ id: e.id, flags: text });
    if (nextSeen && !e.read) read.push(e.id);
    if (!nextSeen && e.read) unread.push(e.id);
  }
  // One transaction: a refused write answers NO (the session's error path) and changes nothing here.
  const written = await s.store.messages.storeFlags(s.login!.tenantId, s.login!.mailboxId, { writes, read, unread, unchangedSince });
  for (const w of writes) {
    if (!written.has(w.id)) { const e = v.entry(w.id); if (e) modified.push(uid ? e.uid : v.seqOf(e)); continue; }
    const e = v.entry(w.id);
    if (e) e.flags = w.flags;
    v.noteFlags(w.flags);
  }
  for (const id of read) { const e = v.entry(id); if (e) e.read = true; }
  for (const id of unread) { const e = v.entry(id); if (e) e.read = false; }
  // The new markers (MODSEQ) come back with the refresh; the flags already match, so it announces nothing for them.
  await s.refresh();
  v.quiet(list.map((e) => e.id));
  // A keyword new to the folder is announced (FLAGS) before a FETCH shows it.
  for (const line of v.keywordLines()) s.send(line);
  if (!m[2]) {
    for (const e of list) {
      if (!v.entry(e.id) || modified.includes(uid ? e.uid : v.seqOf(e))) continue;
      // UID with CONDSTORE on too: RFC 7162 (erratum 1807 of RFC 5162) wants UID and MODSEQ in every
      // untagged FETCH a STORE causes once a CONDSTORE-enabling command was seen.
      s.send(`* ${v.seqOf(e)} FETCH (${uid || s.rev2 || s.condstore ? `UID ${e.uid} ` : ''}FLAGS (${v.flagsOf(e).join(' ')})${s.condstore ? ` MODSEQ (${e.modseq})` : ''})`);
    }
  }
  await s.finish(tag, `${modified.length ? `[MODIFIED ${formatSet(modified)}] ` : ''}${uid ? 'UID ' : ''}STORE completed`);
}

export const storeCommands: Record<string, CommandSpec> = {
  STORE: { states: ['selected'], uid: true, run: (s, tag, p, o) => store(s, tag, p, o.uid) },
};
