import type { FolderEntry, FolderRow } from '../emails/folders/index.js';
import { formatSet, inSet, type SeqSet } from './protocol/parser.js';

/** The flags of an entry as IMAP shows them (\Seen from `read`). */
export function flagsOf(e: FolderEntry): string[] {
  const out = e.flags === '' ? [] : e.flags.split(' ');
  if (e.read) out.unshift('\\Seen');
  return out;
}

/** The system flags every folder offers. */
export const SYSTEM_FLAGS = '\\Answered \\Flagged \\Deleted \\Seen \\Draft';

/** What a refresh found to tell the client. */
export interface Announcements {
  /** Lines to send, in order (EXPUNGE/VANISHED, EXISTS, FETCH). */
  lines: string[];
}

/**
 * A selected folder as the connected client knows it: messages in UID order (the position is the
 * sequence number), each message's last flags and marker, and the marker up to which changes were
 * read. Changes from any face (REST, SMTP delivery, other IMAP sessions) are folded in by
 * `apply`, which says what to announce; removals wait while the command in progress may not
 * announce them (non-UID FETCH, STORE, SEARCH).
 */
export class FolderView {
  entries: FolderEntry[];
  /**
   * Entries by id, made on first use: a SELECT of a large folder that sees no change before the
   * next one need not build it (200,000 entries, ~20-40 ms; issue 47).
   */
  private idMap: Map<number, FolderEntry> | null = null;
  private get byId(): Map<number, FolderEntry> {
    this.idMap ??= new Map(this.entries.map((e) => [e.id, e]));
    return this.idMap;
  }
  /** Ids that left the folder and are not yet announced. */
  private gone = new Set<number>();
  private changedFlags = new Set<number>();
  private added = false;
  private standIns = 0;
  /** UIDs recent for this connection (\Recent, IMAP4rev1). */
  readonly recent = new Set<number>();
  /** Whether \Recent is shown (IMAP4rev1 sessions). */
  showRecent = false;
  /** Keywords the client was told of in FLAGS; one not among them is announced with FLAGS first. */
  readonly keywords = new Set<string>();
  private newKeywords = false;
  /** Claims a UID that arrived as recent for this connection (see recent.ts); set by SELECT. */
  claimRecent: (uid: number) => boolean = () => false;

  constructor(readonly folder: FolderRow, entries: FolderEntry[], public marker: number, readonly readOnly: boolean) {
    this.entries = entries;
    for (const e of entries) if (e.flags !== '') this.noteFlags(e.flags);
    this.newKeywords = false;
  }

  /** Notes the keywords of a flag list; a new one is announced with the next changes. */
  noteFlags(flags: string): void {
    if (flags === '') return;
    for (const f of flags.split(' ')) {
      if (f.startsWith('\\') || this.keywords.has(f)) continue;
      this.keywords.add(f);
      this.newKeywords = true;
    }
  }

  /** The FLAGS and PERMANENTFLAGS lines (SELECT, and when a keyword comes into use). */
  flagsLines(): string[] {
    const flags = [SYSTEM_FLAGS, ...this.keywords].join(' ');
    return [`* FLAGS (${flags})`, `* OK [PERMANENTFLAGS (${this.readOnly ? '' : `${flags} \\*`})] flags`];
  }

  /** FLAGS lines when a keyword came into use since the last ones, else none. */
  keywordLines(): string[] {
    if (!this.newKeywords) return [];
    this.newKeywords = false;
    return this.flagsLines();
  }

  /** The flags of an entry as this connection shows them (\Seen from `read`, \Recent to IMAP4rev1). */
  flagsOf(e: FolderEntry): string[] {
    const out = flagsOf(e);
    if (this.showRecent && this.recent.has(e.uid)) out.unshift('\\Recent');
    return out;
  }

  get exists(): number { return this.entries.length; }
  /** Whether messages expunged elsewhere are still to be announced (SEARCH then answers [EXPUNGEISSUED], RFC 9051 7.1). */
  get expungePending(): boolean { return this.gone.size > 0; }
  /** Whether a message the client still numbers was expunged elsewhere (its expunge not yet announced). */
  isGone(id: number): boolean { return this.gone.has(id); }
  get maxUid(): number { return this.entries.length ? this.entries[this.entries.length - 1].uid : 0; }

  byUid(uid: number): FolderEntry | undefined {
    let lo = 0;
    let hi = this.entries.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const u = this.entries[mid].uid;
      if (u === uid) return this.entries[mid];
      if (u < uid) lo = mid + 1; else hi = mid - 1;
    }
    return undefined;
  }

  /** The sequence number of an entry of the view (found by its UID: entries are in UID order). */
  seqOf(e: FolderEntry): number {
    let lo = 0;
    let hi = this.entries.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const x = this.entries[mid];
      if (x === e) return mid + 1;
      if (x.uid < e.uid) lo = mid + 1; else hi = mid - 1;
    }
    return this.entries.indexOf(e) + 1;
  }

  /** The entries a sequence set (or UID set) names, in order. */
  select(set: SeqSet, uid: boolean): FolderEntry[] {
    if (uid) {
      const max = this.maxUid;
      return this.entries.filter((e) => inSet(set, e.uid, max));
    }
    const n = this.entries.length;
    const out: FolderEntry[] = [];
    for (const r of set) {
      const from = r.from === Infinity ? n : r.from;
      const to = r.to === Infinity ? n : r.to;
      for (let i = Math.min(from, to); i <= Math.max(from, to) && i <= n; i++) if (i >= 1) out.push(this.entries[i - 1]);
    }
    return [...new Set(out)].sort((a, b) => a.uid - b.uid);
  }

  /** Whether a sequence set names numbers beyond the messages (BAD for non-UID commands). */
  outOfRange(set: SeqSet): boolean {
    return set.some((r) => (r.from !== Infinity && r.from > this.entries.length) || (r.to !== Infinity && r.to > this.entries.length));
  }

  /** Folds in one change of the mailbox's mail (one of this folder's or one that left it). */
  apply(c: FolderEntry & { folder: string; deleted: boolean }): void {
    const known = this.byId.get(c.id);
    const here = !c.deleted && c.folder === this.folder.name;
    if (known && !here) { this.gone.add(c.id); return; }
    if (known && c.uid === known.uid) {
      if (known.flags !== c.flags || known.read !== c.read) this.changedFlags.add(c.id);
      this.noteFlags(c.flags);
      known.flags = c.flags;
      known.read = c.read;
      known.modseq = c.modseq;
      return;
    }
    if (known) {
      // Moved out and back since the last look: the old UID goes (under a stand-in id nothing
      // stored has), the message comes again under its new UID.
      const standIn = -(++this.standIns);
      this.byId.delete(c.id);
      known.id = standIn;
      this.byId.set(standIn, known);
      this.gone.add(standIn);
      this.changedFlags.delete(c.id);
    }
    if (!here) return;
    const e: FolderEntry = { id: c.id, uid: c.uid, flags: c.flags, read: c.read, modseq: c.modseq };
    this.byId.set(e.id, e);
    this.noteFlags(e.flags);
    if (this.claimRecent(e.uid)) this.recent.add(e.uid);
    if (e.uid > this.maxUid) this.entries.push(e);
    else { this.entries.push(e); this.entries.sort((a, b) => a.uid - b.uid); }
    this.added = true;
  }

  /** Removes entries this connection expunged or moved itself; answers their old sequence numbers. */
  private removedLately: Array<{ seq: number; uid: number }> = [];

  /** The removals since the last call (kept searches tell them by their old numbers). */
  takeRemoved(): Array<{ seq: number; uid: number }> {
    const out = this.removedLately;
    this.removedLately = [];
    return out;
  }

  remove(ids: Iterable<number>): Array<{ seq: number; uid: number }> {
    const drop = new Set(ids);
    const out: Array<{ seq: number; uid: number }> = [];
    this.entries.forEach((e, i) => { if (drop.has(e.id)) { out.push({ seq: i + 1, uid: e.uid }); this.recent.delete(e.uid); } });
    this.entries = this.entries.filter((e) => !drop.has(e.id));
    for (const id of drop) { this.byId.delete(id); this.gone.delete(id); this.changedFlags.delete(id); }
    if (this.removedLately.length < 100_000) this.removedLately.push(...out);
    return out;
  }

  /** Lines announcing removals: EXPUNGE per message (highest first, so numbers stay valid) or one VANISHED. */
  static removalLines(removed: Array<{ seq: number; uid: number }>, qresync: boolean): string[] {
    if (removed.length === 0) return [];
    if (qresync) return [`* VANISHED ${formatSet(removed.map((r) => r.uid))}`];
    return [...removed].sort((a, b) => b.seq - a.seq).map((r) => `* ${r.seq} EXPUNGE`);
  }

  /** What to tell the client of the changes folded in so far; removals only when `expunges` allows. */
  announce(opts: { expunges: boolean; qresync: boolean; condstore: boolean }): string[] {
    const lines: string[] = [];
    if (opts.expunges && this.gone.size) lines.push(...FolderView.removalLines(this.remove([...this.gone]), opts.qresync));
    // EXISTS before flag changes: a FETCH may be about a message that just arrived.
    if (this.added) {
      lines.push(`* ${this.entries.length} EXISTS`);
      if (this.showRecent) lines.push(`* ${this.recent.size} RECENT`);
      this.added = false;
    }
    lines.push(...this.keywordLines());
    for (const id of this.changedFlags) {
      const e = this.byId.get(id);
      if (!e) continue;
      lines.push(`* ${this.seqOf(e)} FETCH (UID ${e.uid} FLAGS (${this.flagsOf(e).join(' ')})${opts.condstore ? ` MODSEQ (${e.modseq})` : ''})`);
    }
    this.changedFlags.clear();
    return lines;
  }

  /** Forgets a pending flag announcement (the command answering for the message shows its flags itself). */
  quiet(ids: Iterable<number>): void {
    for (const id of ids) this.changedFlags.delete(id);
  }

  entry(id: number): FolderEntry | undefined { return this.byId.get(id); }

  /**
   * Whether an entry taken from the view is still in it (not removed meanwhile): by its UID, so a
   * FETCH of a few messages of a large folder does not build the map by id (~20 ms at 200,000).
   */
  holds(e: FolderEntry): boolean { return this.byUid(e.uid) === e; }
}
