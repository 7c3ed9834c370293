import type { FolderRow } from '../emails/folder-messages.js';
import { DEFAULT_FOLDERS } from '../emails/folder-store.js';
import type { Parser } from './parser.js';
import { MAX_LITERAL } from './reader.js';
import { ImapBad, ImapNo, type CommandSpec, type Session } from './session.js';
import { astr } from './wire.js';

const AUTHED = ['auth', 'selected'] as const;
const DELIMITER = '/';
const PROTECTED = new Set(DEFAULT_FOLDERS.map(([n]) => n));

/** A folder name a client may create: not empty, no wildcard or control character, no empty level. */
function checkName(name: string): void {
  if (name === '' || name.length > 255 || /[\x00-\x1f\x7f*%]/.test(name) || name.split(DELIMITER).some((l) => l === '')) {
    throw new ImapNo('invalid folder name', 'CANNOT');
  }
}

/**
 * A LIST pattern (with the reference prefixed) as a test of a folder name: `*` any, `%` any but the
 * delimiter. Matched by walking the name once per pattern character, not by a regular expression: a
 * pattern such as `***...*q` made the backtracking of one take minutes, and the whole process waited.
 */
function patternMatcher(reference: string, pattern: string): (name: string) => boolean {
  const fold = /^inbox/i.test(reference + pattern);
  // A run of wildcards is one: `*` when it holds one, else `%`.
  const chars = [...(fold ? (reference + pattern).toLowerCase() : reference + pattern).replace(/[*%]+/g, (w) => (w.includes('*') ? '*' : '%'))];
  const literals = chars.filter((c) => c !== '*' && c !== '%').length;
  return (folder) => {
    const name = [...(fold ? folder.toLowerCase() : folder)];
    if (literals > name.length) return false;
    // reach[i]: the pattern read so far can end just before name[i].
    let reach = new Uint8Array(name.length + 1);
    reach[0] = 1;
    for (const c of chars) {
      const next = new Uint8Array(name.length + 1);
      let any = 0;
      let on = 0;
      for (let i = 0; i <= name.length; i++) {
        if (c === '*') on = on || reach[i];
        else if (c === '%') on = (on && name[i - 1] !== DELIMITER ? 1 : 0) || reach[i];
        else on = i > 0 && reach[i - 1] && name[i - 1] === c ? 1 : 0;
        next[i] = on;
        any |= on;
      }
      if (!any) return false;
      reach = next;
    }
    return reach[name.length] === 1;
  };
}

const matches = (test: (name: string) => boolean, name: string) => test(name) || (name === 'INBOX' && test('inbox'));

/** STATUS items of a folder, as `(NAME value ...)`. */
export async function statusItems(s: Session, f: FolderRow, items: string[]): Promise<string> {
  const c = await s.store.messages.counts(s.login!.mailboxId, f.name);
  const highest = items.includes('HIGHESTMODSEQ') ? await s.store.messages.highestModseq(s.login!.tenantId) : 0;
  const values: Record<string, number> = {
    MESSAGES: c.messages, UIDNEXT: f.uidnext, UIDVALIDITY: f.id, UNSEEN: c.unseen, DELETED: c.deleted, SIZE: c.size,
    RECENT: 0, HIGHESTMODSEQ: highest, APPENDLIMIT: MAX_LITERAL,
  };
  return `(${items.map((i) => `${i} ${values[i]}`).join(' ')})`;
}

function readStatusItems(p: Parser): string[] {
  const items = p.list(() => p.atom().toUpperCase(), false);
  for (const i of items) {
    if (!['MESSAGES', 'UIDNEXT', 'UIDVALIDITY', 'UNSEEN', 'DELETED', 'SIZE', 'RECENT', 'HIGHESTMODSEQ', 'APPENDLIMIT'].includes(i)) throw new ImapBad(`unknown status item ${i}`);
  }
  return items;
}

/** The folder a command names, or NO [NONEXISTENT]. */
export async function folderNamed(s: Session, name: string): Promise<FolderRow> {
  await s.store.messages.folders(s.login!.mailboxId);
  const f = await s.store.messages.folder(s.login!.mailboxId, name);
  if (!f) throw new ImapNo('no such folder', 'NONEXISTENT');
  return f;
}

/** LIST and LSUB (RFC 9051 6.3.9, LIST-EXTENDED selection and return options, SPECIAL-USE, LIST-STATUS). */
async function list(s: Session, tag: string, p: Parser, lsub: boolean): Promise<void> {
  p.sp();
  const select = new Set<string>();
  if (!lsub && p.peek() === 0x28) { for (const o of p.list(() => p.atom().toUpperCase())) select.add(o); p.sp(); }
  const reference = p.listMailbox();
  p.sp();
  const patterns = !lsub && p.peek() === 0x28 ? p.list(() => p.listMailbox(), false) : [p.listMailbox()];
  const ret = new Set<string>();
  let statusWanted: string[] = [];
  if (!lsub && p.maybeSp()) {
    p.expect('RETURN');
    p.sp();
    p.list(() => {
      const o = p.atom().toUpperCase();
      ret.add(o);
      if (o === 'STATUS') { p.sp(); statusWanted = readStatusItems(p); }
      return o;
    });
  }
  p.end();
  const folders = await s.store.messages.folders(s.login!.mailboxId);
  const cmd = lsub ? 'LSUB' : 'LIST';
  if (patterns.length === 1 && patterns[0] === '') {
    s.send(`* ${cmd} (\\Noselect) "${DELIMITER}" ""`);
    return s.finish(tag, `${cmd} completed`);
  }
  const res = patterns.map((pt) => patternMatcher(reference, pt));
  const names = new Set(folders.map((f) => f.name));
  for (const f of folders) {
    if (!res.some((re) => matches(re, f.name))) continue;
    const subscribedOnly = lsub || select.has('SUBSCRIBED');
    if (subscribedOnly && !f.subscribed) continue;
    if (select.has('SPECIAL-USE') && !f.special_use) continue;
    const attrs: string[] = [];
    const children = [...names].some((n) => n.startsWith(f.name + DELIMITER));
    attrs.push(children ? '\\HasChildren' : '\\HasNoChildren');
    if (f.subscribed && (ret.has('SUBSCRIBED') || select.has('SUBSCRIBED'))) attrs.push('\\Subscribed');
    if (f.special_use && !lsub) attrs.push(f.special_use);
    s.send(`* ${cmd} (${attrs.join(' ')}) "${DELIMITER}" ${astr(f.name)}`);
    if (statusWanted.length) s.send(`* STATUS ${astr(f.name)} ${await statusItems(s, f, statusWanted)}`);
  }
  await s.finish(tag, `${cmd} completed`);
}

export const mailboxCommands: Record<string, CommandSpec> = {
  LIST: { states: AUTHED, run: (s, tag, p) => list(s, tag, p, false) },
  LSUB: { states: AUTHED, run: (s, tag, p) => list(s, tag, p, true) },
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
      const f = await folderNamed(s, p.mailbox());
      p.end();
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

