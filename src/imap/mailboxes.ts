import type { FolderRow } from '../emails/folder-messages.js';
import { DEFAULT_FOLDERS } from '../mailstore/folder-store.js';
import type { Parser } from './parser.js';
import { MAX_LITERAL } from './reader.js';
import { DELIMITER, list, readStatusItems } from './list.js';
import { ImapNo, type CommandSpec, type Session } from './session.js';
import { astr } from './wire.js';

const AUTHED = ['auth', 'selected'] as const;
const PROTECTED = new Set(DEFAULT_FOLDERS.map(([n]) => n));

/** A folder name a client may create: not empty, no wildcard or control character, no empty level. */
function checkName(name: string): void {
  if (name === '' || name.length > 255 || /[\x00-\x1f\x7f*%]/.test(name) || name.split(DELIMITER).some((l) => l === '')) {
    throw new ImapNo('invalid folder name', 'CANNOT');
  }
}

/** STATUS items of a folder, as `(NAME value ...)`. */
export async function statusItems(s: Session, f: FolderRow, items: string[]): Promise<string> {
  const c = await s.store.messages.counts(s.login!.mailboxId, f.name);
  const highest = items.includes('HIGHESTMODSEQ') ? await s.store.messages.highestModseq(s.login!.tenantId) : 0;
  // Recent: messages no session has claimed yet (recent.ts); read only when some may be.
  const boundary = s.deps.recent.boundary(f.id);
  const recent = items.includes('RECENT') && boundary < f.uidnext - 1
    ? (await s.store.messages.entries(s.login!.mailboxId, f.name)).filter((e) => e.uid > boundary).length : 0;
  const values: Record<string, number> = {
    MESSAGES: c.messages, UIDNEXT: f.uidnext, UIDVALIDITY: f.id, UNSEEN: c.unseen, DELETED: c.deleted, SIZE: c.size,
    RECENT: recent, HIGHESTMODSEQ: highest, APPENDLIMIT: MAX_LITERAL,
  };
  return `(${items.map((i) => `${i} ${values[i]}`).join(' ')})`;
}

/** The folder a command names, or NO [NONEXISTENT]. */
export async function folderNamed(s: Session, name: string): Promise<FolderRow> {
  await s.store.messages.folders(s.login!.mailboxId);
  const f = await s.store.messages.folder(s.login!.mailboxId, name);
  if (!f) throw new ImapNo('no such folder', 'NONEXISTENT');
  return f;
}

export const mailboxCommands: Record<string, CommandSpec> = {
  LIST: { states: AUTHED, run: (s, tag, p) => list(s, tag, p, false, (f, items) => statusItems(s, f, items)) },
  LSUB: { states: AUTHED, run: (s, tag, p) => list(s, tag, p, true, (f, items) => statusItems(s, f, items)) },
  NAMESPACE: {
    states: AUTHED,
    async run(s, tag, p) {
      p.end();
      s.send(`* NAMESPACE (("" "${DELIMITER}")) NIL NIL`);
      await s.finish(tag, 'NAMESPACE completed');
    },
  },
  CREATE: {
    states: AUTHED,
    async run(s, tag, p) {
      p.sp();
      let name = p.mailbox();
      p.end();
      if (name.endsWith(DELIMITER)) name = name.slice(0, -1);
      checkName(name);
      if (name === 'INBOX') throw new ImapNo('INBOX exists', 'ALREADYEXISTS');
      await s.store.messages.folders(s.login!.mailboxId);
      if (!(await s.store.messages.createFolder(s.login!.mailboxId, name))) throw new ImapNo('folder exists', 'ALREADYEXISTS');
      // A subscription kept from a folder of this name deleted earlier is the new folder's.
      if (await s.store.messages.dropSubscription(s.login!.mailboxId, name)) {
        const made = await s.store.messages.folder(s.login!.mailboxId, name);
        if (made) await s.store.messages.setSubscribed(made.id, true);
      }
      await s.finish(tag, 'CREATE completed');
    },
  },
  DELETE: {
    states: AUTHED,
    async run(s, tag, p) {
      p.sp();
      const name = p.mailbox();
      p.end();
      const f = await folderNamed(s, name);
      if (PROTECTED.has(f.name)) throw new ImapNo('this folder cannot be deleted', 'CANNOT');
      const all = await s.store.messages.folders(s.login!.mailboxId);
      if (all.some((x) => x.name.startsWith(f.name + DELIMITER))) throw new ImapNo('delete the folders inside it first', 'INUSE');
      if (s.view?.folder.id === f.id) { s.view = null; s.state = 'auth'; }
      await s.store.messages.deleteFolder(s.login!.tenantId, s.login!.mailboxId, f);
      if (f.subscribed) await s.store.messages.keepSubscription(s.login!.mailboxId, f.name); // RFC 9051 6.3.4
      await s.finish(tag, 'DELETE completed');
    },
  },
  RENAME: {
    states: AUTHED,
    async run(s, tag, p) {
      p.sp();
      const from = p.mailbox();
      p.sp();
      const to = p.mailbox();
      p.end();
      checkName(to);
      const f = await folderNamed(s, from);
      if (PROTECTED.has(f.name)) throw new ImapNo('this folder cannot be renamed', 'CANNOT');
      if (to === f.name || to.startsWith(f.name + DELIMITER)) throw new ImapNo('cannot rename a folder into itself', 'CANNOT');
      if (await s.store.messages.folder(s.login!.mailboxId, to)) throw new ImapNo('target exists', 'ALREADYEXISTS');
      const parent = to.split(DELIMITER).slice(0, -1).join(DELIMITER);
      if (parent) await s.store.messages.createFolder(s.login!.mailboxId, parent);
      await s.store.messages.renameFolder(s.login!.mailboxId, f.name, to);
      await s.finish(tag, 'RENAME completed');
    },
  },
  SUBSCRIBE: {
    states: AUTHED,
    async run(s, tag, p) {
      p.sp();
      const f = await folderNamed(s, p.mailbox());
      p.end();
      await s.store.messages.setSubscribed(f.id, true);
      await s.finish(tag, 'SUBSCRIBE completed');
    },
  },
  UNSUBSCRIBE: {
    states: AUTHED,
    async run(s, tag, p) {
      p.sp();
      const name = p.mailbox();
      p.end();
      // A subscription kept for a deleted folder can go too.
      if (await s.store.messages.dropSubscription(s.login!.mailboxId, name)) return s.finish(tag, 'UNSUBSCRIBE completed');
      const f = await folderNamed(s, name);
      await s.store.messages.setSubscribed(f.id, false);
      await s.finish(tag, 'UNSUBSCRIBE completed');
    },
  },
  STATUS: {
    states: AUTHED,
    async run(s, tag, p) {
      p.sp();
      const name = p.mailbox();
      p.sp();
      const items = readStatusItems(p);
      p.end();
      const f = await folderNamed(s, name);
      s.send(`* STATUS ${astr(f.name)} ${await statusItems(s, f, items)}`);
      await s.finish(tag, 'STATUS completed');
    },
  },
};

