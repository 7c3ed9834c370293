import type { FolderEntry } from '../../emails/folders/index.js';
import { parseMime, type MimePart } from '../../message/mime.js';
import { formatSet, inSet, type Parser, type SeqSet } from '../protocol/parser.js';
import { binaryBytes, readSection, sectionBytes, sectionName, type Section } from './fetch-sections.js';
import { ImapBad, type CommandSpec, type Session } from '../protocol/session.js';
import { bodyStructure } from '../../message/structure.js';
import { summarise } from './fetch-summaries.js';
import { dateTime, lit, type Piece } from '../protocol/wire.js';

/** Messages whose rows one query reads, and whose answers are written before waiting for the socket to drain. */
const CHUNK = 500;

/** One requested item. */
type Item =
  | { kind: 'FLAGS' | 'UID' | 'INTERNALDATE' | 'RFC822.SIZE' | 'ENVELOPE' | 'BODY' | 'BODYSTRUCTURE' | 'MODSEQ' }
  | { kind: 'section'; name: string; section: Section; peek: boolean; partial: [number, number] | null }
  | { kind: 'binary'; section: Section; peek: boolean; partial: [number, number] | null; size: boolean };

const MACROS: Record<string, string[]> = {
  ALL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE'],
  FAST: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE'],
  FULL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE', 'BODY'],
};

function partial(p: Parser): [number, number] | null {
  if (!p.take('<')) return null;
  const start = p.number();
  p.expect('.');
  const len = p.nzNumber();
  p.expect('>');
  return [start, len];
}

function readItem(p: Parser): Item {
  const name = p.word();
  switch (name) {
    case 'FLAGS': case 'UID': case 'INTERNALDATE': case 'RFC822.SIZE': case 'ENVELOPE': case 'BODYSTRUCTURE': case 'MODSEQ':
      return { kind: name };
    case 'RFC822': return { kind: 'section', name: 'RFC822', section: { path: [], text: '', fields: [] }, peek: false, partial: null };
    case 'RFC822.HEADER': return { kind: 'section', name: 'RFC822.HEADER', section: { path: [], text: 'HEADER', fields: [] }, peek: true, partial: null };
    case 'RFC822.TEXT': return { kind: 'section', name: 'RFC822.TEXT', section: { path: [], text: 'TEXT', fields: [] }, peek: false, partial: null };
    case 'BODY': case 'BODY.PEEK': {
      if (p.peek() !== 0x5b) {
        if (name === 'BODY.PEEK') p.fail('section');
        return { kind: 'BODY' };
      }
      const section = readSection(p, false);
      return { kind: 'section', name: 'BODY', section, peek: name === 'BODY.PEEK', partial: partial(p) };
    }
    case 'BINARY': case 'BINARY.PEEK': case 'BINARY.SIZE': {
      const section = readSection(p, true);
      const size = name === 'BINARY.SIZE';
      return { kind: 'binary', section, peek: name !== 'BINARY', partial: size ? null : partial(p), size };
    }
    default:
      throw new ImapBad(`unknown fetch item ${name}`);
  }
}

/** The items of a FETCH: one, a macro, or a list. */
function readItems(p: Parser): Item[] {
  if (p.peek() === 0x28) return p.list(() => readItem(p), false);
  const save = p.pos;
  const w = p.word();
  if (MACROS[w]) return MACROS[w].map((k) => ({ kind: k }) as Item);
  p.pos = save;
  return [readItem(p)];
}

/** The `(CHANGEDSINCE n [VANISHED])` modifier (RFC 7162). */
function readModifiers(p: Parser): { changedSince: number | null; vanished: boolean } {
  let changedSince: number | null = null;
  let vanished = false;
  if (!p.maybeSp()) return { changedSince, vanished };
  p.list(() => {
    const w = p.word();
    if (w === 'CHANGEDSINCE') { p.sp(); changedSince = p.modseq(); } else if (w === 'VANISHED') vanished = true;
    else throw new ImapBad(`unknown FETCH modifier ${w}`);
    return w;
  }, false);
  return { changedSince, vanished };
}

/** Whether a section is the whole message. */
const whole = (section: Section) => section.path.length === 0 && section.text === '';

const slice = (b: Buffer, part: [number, number] | null) => (part ? b.subarray(Math.min(part[0], b.length), Math.min(part[0] + part[1], b.length)) : b);

/** Resolves a sequence set (or `$`) against the view; BAD for sequence numbers past the end. */
export function targets(s: Session, set: SeqSet | '$', uid: boolean): FolderEntry[] {
  const v = s.view!;
  if (set === '$') return v.entries.filter((e) => s.saved.includes(e.uid));
  if (!uid && v.outOfRange(set)) throw new ImapBad('no such message');
  return v.select(set, uid);
}

/** FETCH / UID FETCH (RFC 9051 6.4.5, CONDSTORE/QRESYNC modifiers). */
async function fetch(s: Session, tag: string, p: Parser, uid: boolean): Promise<void> {
  p.sp();
  const set = p.seqSet();
  p.sp();
  const items = readItems(p);
  const { changedSince, vanished } = readModifiers(p);
  p.end();
  if (vanished && (!uid || !s.qresync || changedSince === null)) throw new ImapBad('VANISHED needs UID FETCH, QRESYNC and CHANGEDSINCE');
  const v = s.view!;
  await s.sync();
  let list = targets(s, set, uid);
  if (uid && !items.some((i) => i.kind === 'UID')) items.unshift({ kind: 'UID' });
  if (changedSince !== null) {
    s.enableCondstore();
    list = list.filter((e) => e.modseq > changedSince);
    if (!items.some((i) => i.kind === 'MODSEQ')) items.push({ kind: 'MODSEQ' });
  }
  if (items.some((i) => i.kind === 'MODSEQ')) s.enableCondstore();
  if (vanished && set !== '$') {
    const present = new Set(v.entries.map((e) => e.uid));
    const top = Math.min(v.folder.uidnext - 1, v.maxUid + 1_000_000);
    const gone: number[] = [];
    // `*` stands for the highest UID ever given here (UIDNEXT - 1): expunged UIDs above the live ones count too.
    for (let u = 1; u <= top && gone.length < 100_000; u++) if (!present.has(u) && inSet(set, u, v.folder.uidnext - 1)) gone.push(u);
    if (gone.length) s.send(`* VANISHED (EARLIER) ${formatSet(gone)}`);
  }
  // Header-sync items come from rows (fetch-summaries.ts); only sections, BINARY and BODY read the bytes.
  const needSummary = items.some((i) => i.kind === 'RFC822.SIZE' || i.kind === 'ENVELOPE' || i.kind === 'BODYSTRUCTURE');
  const needRow = needSummary || items.some((i) => i.kind === 'INTERNALDATE');
  const needRaw = items.some((i) => i.kind === 'BODY' || i.kind === 'section' || i.kind === 'binary');
  // The whole message (BODY[], RFC822, BINARY[]) is the bytes as they are: no MIME tree needed.
  const needMime = items.some((i) => i.kind === 'BODY' || ((i.kind === 'section' || i.kind === 'binary') && !whole(i.section)));
  const setsSeen = !v.readOnly && items.some((i) => (i.kind === 'section' || i.kind === 'binary') && !i.peek);
  // \Seen of the whole set in one transaction before any answer: a refused write answers NO and shows nothing as seen.
  const marking = setsSeen ? list.filter((e) => !e.read) : [];
  if (marking.length) await s.store.messages.markRead(s.login!.tenantId, marking.map((e) => e.id));
  const markedSeen = new Set(marking.map((e) => e.id));
  for (let at = 0; at < list.length; at += CHUNK) {
    const chunk = list.slice(at, at + CHUNK);
    const rows = needRow ? await summarise(s, chunk, needSummary) : null;
    for (const e of chunk) {
      if (!v.holds(e)) continue;
      const row = rows?.get(e.id);
      if (rows && !row) continue; // expunged meanwhile
      let raw: Buffer | null = null;
      let mime: MimePart | null = null;
      if (needRaw) {
        try {
          raw = await s.raw!(e.id);
        } catch {
          continue; // expunged meanwhile
        }
        if (needMime) mime = parseMime(raw);
      }
      let flagsChanged = false;
      if (markedSeen.has(e.id) && !e.read) {
        e.read = true;
        flagsChanged = true;
      }
      const out: Piece[] = [];
      const add = (...x: Piece[]) => { if (out.length) out.push(' '); out.push(...x); };
      for (const i of items) {
        switch (i.kind) {
          case 'UID': add(`UID ${e.uid}`); break;
          case 'FLAGS': add(`FLAGS (${v.flagsOf(e).join(' ')})`); break;
          case 'MODSEQ': add(`MODSEQ (${e.modseq})`); break;
          case 'INTERNALDATE': add(`INTERNALDATE ${dateTime(row!.receivedAt)}`); break;
          case 'RFC822.SIZE': add(`RFC822.SIZE ${row!.summary!.size}`); break;
          case 'ENVELOPE': add(`ENVELOPE ${row!.summary!.envelope}`); break;
          case 'BODYSTRUCTURE': add(`BODYSTRUCTURE ${row!.summary!.bodystructure}`); break;
          case 'BODY': add(`BODY ${bodyStructure(raw!, mime!, false)}`); break;
          case 'section': {
            const bytes = slice(whole(i.section) ? raw! : sectionBytes(raw!, mime!, i.section), i.partial);
            const label = i.name === 'BODY' ? `BODY[${sectionName(i.section)}]${i.partial ? `<${i.partial[0]}>` : ''}` : i.name;
            // NUL may travel only in a literal8 (RFC 3516); a client that stored one gets it back so.
            add(`${label} `, ...lit(bytes, bytes.includes(0)));
            break;
          }
          case 'binary': {
            const decoded = whole(i.section) ? raw! : binaryBytes(raw!, mime!, i.section.path);
            const label = `[${i.section.path.join('.')}]`;
            if (i.size) add(`BINARY.SIZE${label} ${decoded.length}`);
            else {
              const bytes = slice(decoded, i.partial);
              add(`BINARY${label}${i.partial ? `<${i.partial[0]}>` : ''} `, ...lit(bytes, bytes.includes(0)));
            }
            break;
          }
        }
      }
      if (flagsChanged && !items.some((i) => i.kind === 'FLAGS')) add(`FLAGS (${v.flagsOf(e).join(' ')})`);
      s.send([`* ${v.seqOf(e)} FETCH (`, ...out, ')']);
      // A client that reads slowly holds the command here rather than the server buffering its answer.
      if (needRaw) await s.drained();
    }
    await s.drained();
  }
  if (setsSeen) await s.refresh();
  v.quiet(list.map((e) => e.id));
  await s.finish(tag, `${uid ? 'UID ' : ''}FETCH completed`);
}

export const fetchCommands: Record<string, CommandSpec> = {
  FETCH: { states: ['selected'], uid: true, run: (s, tag, p, o) => fetch(s, tag, p, o.uid) },
};
