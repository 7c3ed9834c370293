import { folderNamed } from './mailboxes.js';
import { formatSet, inSet, type Parser, type SeqSet } from '../protocol/parser.js';
import { ImapBad, type CommandSpec, type Session } from '../protocol/session.js';
import { FolderView } from '../view.js';
import { astr } from '../protocol/wire.js';

const AUTHED = ['auth', 'selected'] as const;

/** QRESYNC's SELECT parameter (RFC 7162 3.2.5): what the client last knew of the folder. */
interface Qresync { uidvalidity: number; modseq: number; knownUids: SeqSet | null }

function selectParams(p: Parser): { condstore: boolean; qresync: Qresync | null } {
  let condstore = false;
  let qresync: Qresync | null = null;
  if (!p.maybeSp()) return { condstore, qresync };
  p.list(() => {
    const name = p.atom().toUpperCase();
    if (name === 'CONDSTORE') condstore = true;
    else if (name === 'QRESYNC') {
      p.sp();
      p.expect('(');
      const uidvalidity = p.nzNumber();
      p.sp();
      const modseq = p.modseq();
      let knownUids: SeqSet | null = null;
      if (p.maybeSp()) {
        if (p.peek() === 0x28) p.list(() => p.seqSet()); // seq-match-data: accepted, not needed
        else {
          const set = p.seqSet();
          if (set === '$') throw new ImapBad('$ not allowed here');
          knownUids = set;
          if (p.maybeSp()) p.list(() => p.seqSet());
        }
      }
      p.expect(')');
      qresync = { uidvalidity, modseq, knownUids };
    } else throw new ImapBad(`unknown SELECT parameter ${name}`);
    return name;
  });
  return { condstore, qresync };
}

/** SELECT and EXAMINE: opens a folder, read-write or read-only, and tells its state (RFC 9051 6.3.2). */
async function open(s: Session, tag: string, p: Parser, readOnly: boolean): Promise<void> {
  p.sp();
  const name = p.mailbox();
  const { condstore, qresync } = selectParams(p);
  p.end();
  if (qresync && !s.qresync) throw new ImapBad('ENABLE QRESYNC first');
  // A failed SELECT leaves no folder selected (RFC 9051 6.3.2); QRESYNC clients are told (RFC 7162 3.2.11).
  if (s.view && s.qresync) s.send('* OK [CLOSED] previous folder closed');
  s.view = null;
  s.state = 'auth';
  const f = await folderNamed(s, name);
  if (condstore) s.enabled.add('CONDSTORE');
  const m = s.store.messages;
  const marker = await m.highestModseq(s.login!.tenantId);
  const view = new FolderView(f, await m.folderEntries(s.login!.tenantId, s.login!.mailboxId, f.name), marker, readOnly);
  // \Recent: a read-write session claims what no session has seen; a read-only one only looks.
  const claims = s.deps.recent;
  const before = readOnly ? claims.boundary(f.id) : claims.claim(f.id, view.maxUid);
  for (const e of view.entries) if (e.uid > before) view.recent.add(e.uid);
  view.claimRecent = readOnly ? (uid) => uid > claims.boundary(f.id) : (uid) => claims.claim(f.id, uid) < uid;
  view.showRecent = !s.rev2;
  s.send(`* ${view.exists} EXISTS`);
  if (!s.rev2) s.send(`* ${view.recent.size} RECENT`);
  for (const line of view.flagsLines()) s.send(line);
  // IMAP4rev1 tells the first unseen message's number (RFC 3501 6.3.1; rev2 dropped it).
  const firstUnseen = s.rev2 ? -1 : view.entries.findIndex((e) => !e.read);
  if (firstUnseen >= 0) s.send(`* OK [UNSEEN ${firstUnseen + 1}] first unseen`);
  s.send(`* OK [UIDVALIDITY ${f.id}] UIDs valid`);
  s.send(`* OK [UIDNEXT ${f.uidnext}] predicted next UID`);
  s.send(`* OK [HIGHESTMODSEQ ${marker}] highest`);
  s.send(`* LIST () "/" ${astr(f.name)}`);
  if (qresync && qresync.uidvalidity === f.id) {
    // What the client knew and is gone now: every known UID below UIDNEXT that no longer exists here.
    const present = new Set(view.entries.map((e) => e.uid));
    const known = qresync.knownUids;
    const vanished: number[] = [];
    const top = Math.min(f.uidnext - 1, known ? Math.max(...known.map((r) => (r.to === Infinity ? f.uidnext - 1 : r.to))) : f.uidnext - 1);
    for (let u = 1; u <= top && vanished.length < 100_000; u++) if (!present.has(u) && (!known || inSet(known, u, f.uidnext - 1))) vanished.push(u);
    if (vanished.length) s.send(`* VANISHED (EARLIER) ${formatSet(vanished)}`);
    for (const e of view.entries) {
      if (e.modseq > qresync.modseq) s.send(`* ${view.seqOf(e)} FETCH (UID ${e.uid} FLAGS (${flagsText(e)}) MODSEQ (${e.modseq}))`);
    }
  }
  s.view = view;
  s.state = 'selected';
  s.ok(tag, `[${readOnly ? 'READ-ONLY' : 'READ-WRITE'}] ${readOnly ? 'EXAMINE' : 'SELECT'} completed`);
}

const flagsText = (e: { flags: string; read: boolean }) => [e.read ? '\\Seen' : '', e.flags].filter(Boolean).join(' ');

export const selectCommands: Record<string, CommandSpec> = {
  SELECT: { states: AUTHED, run: (s, tag, p) => open(s, tag, p, false) },
  EXAMINE: { states: AUTHED, run: (s, tag, p) => open(s, tag, p, true) },
  UNSELECT: {
    states: ['selected'],
    async run(s, tag, p) {
      p.end();
      s.view = null;
      s.state = 'auth';
      s.ok(tag, 'UNSELECT completed');
    },
  },
};
