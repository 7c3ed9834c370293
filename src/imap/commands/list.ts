import type { FolderRow } from '../../emails/folders/index.js';
import type { Parser } from '../protocol/parser.js';
import { ImapBad, type Session } from '../protocol/session.js';
import { astr } from '../protocol/wire.js';

export const DELIMITER = '/';
const SELECTION = new Set(['SUBSCRIBED', 'REMOTE', 'RECURSIVEMATCH', 'SPECIAL-USE']);
const RETURNS = new Set(['SUBSCRIBED', 'CHILDREN', 'STATUS', 'SPECIAL-USE']);
export const STATUS_ITEMS = ['MESSAGES', 'UIDNEXT', 'UIDVALIDITY', 'UNSEEN', 'DELETED', 'SIZE', 'RECENT', 'HIGHESTMODSEQ', 'APPENDLIMIT'];

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

export function readStatusItems(p: Parser): string[] {
  const items = p.list(() => p.atom().toUpperCase(), false);
  for (const i of items) if (!STATUS_ITEMS.includes(i)) throw new ImapBad(`unknown status item ${i}`);
  return items;
}

/** The ancestors of a folder name (`a`, `a/b` of `a/b/c`). */
const ancestors = (name: string) => name.split(DELIMITER).slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join(DELIMITER));

/**
 * LIST and LSUB (RFC 9051 6.3.9, RFC 3501 6.3.9, LIST-EXTENDED RFC 5258 with its selection and
 * return options, RECURSIVEMATCH and CHILDINFO, SPECIAL-USE, LIST-STATUS RFC 5819). An option not
 * defined is BAD; RECURSIVEMATCH needs a selection option other than REMOTE. A folder whose
 * subscribed descendant is not listed itself is listed with CHILDINFO ("SUBSCRIBED") (and under
 * LSUB with % as \Noselect when not subscribed itself).
 */
export async function list(s: Session, tag: string, p: Parser, lsub: boolean, status: (f: FolderRow, items: string[]) => Promise<string>): Promise<void> {
  p.sp();
  const select = new Set<string>();
  if (!lsub && p.peek() === 0x28) {
    for (const o of p.list(() => p.atom().toUpperCase())) {
      if (!SELECTION.has(o)) throw new ImapBad(`unknown selection option ${o}`);
      select.add(o);
    }
    if (select.has('RECURSIVEMATCH') && ![...select].some((o) => o !== 'RECURSIVEMATCH' && o !== 'REMOTE')) throw new ImapBad('RECURSIVEMATCH needs another selection option');
    p.sp();
  }
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
      if (!RETURNS.has(o)) throw new ImapBad(`unknown return option ${o}`);
      ret.add(o);
      if (o === 'STATUS') { p.sp(); statusWanted = readStatusItems(p); }
      return o;
    });
  }
  p.end();
  const existing = await s.store.messages.folders(s.login!.mailboxId);
  const names = new Set(existing.map((f) => f.name));
  // Subscriptions of names that are no folder (a subscribed folder deleted) list as \NonExistent.
  const orphans = new Set((await s.store.messages.orphanSubscriptions(s.login!.mailboxId)).filter((n) => !names.has(n)));
  const folders: FolderRow[] = [...existing, ...[...orphans].map((name) => ({ id: 0, mailbox_id: s.login!.mailboxId, name, special_use: null, subscribed: 1, uidnext: 0 }))];
  const cmd = lsub ? 'LSUB' : 'LIST';
  if (patterns.length === 1 && patterns[0] === '') {
    s.send(`* ${cmd} (\\Noselect) "${DELIMITER}" ""`);
    return s.finish(tag, `${cmd} completed`);
  }
  const res = patterns.map((pt) => patternMatcher(reference, pt));
  const matched = (name: string) => res.some((re) => matches(re, name));
  const subscribedOnly = lsub || select.has('SUBSCRIBED');
  const recursive = lsub || select.has('RECURSIVEMATCH');
  const meets = (f: FolderRow) => (!orphans.has(f.name) || subscribedOnly) && (!subscribedOnly || f.subscribed === 1) && (!select.has('SPECIAL-USE') || !!f.special_use);
  // Folders with a descendant that meets the selection but is not listed itself (CHILDINFO).
  const childInfo = new Set<string>();
  // LSUB (RFC 3501 6.3.10) names such a parent only for a descendant that % hid and * would match.
  const starRes = patterns.map((pt) => patternMatcher(reference, pt.replaceAll('%', '*')));
  const hidden = (name: string) => !matched(name) && (!lsub || starRes.some((re) => matches(re, name)));
  if (recursive && subscribedOnly) for (const f of folders) if (meets(f) && hidden(f.name)) for (const a of ancestors(f.name)) childInfo.add(a);
  for (const f of folders) {
    if (!matched(f.name)) continue;
    const info = childInfo.has(f.name);
    if (!meets(f) && !info) continue;
    const attrs: string[] = [];
    const gone = orphans.has(f.name);
    if ((!meets(f) || gone) && lsub) attrs.push('\\Noselect');
    if (gone && !lsub) attrs.push('\\NonExistent');
    else attrs.push([...names].some((n) => n.startsWith(f.name + DELIMITER)) ? '\\HasChildren' : '\\HasNoChildren');
    if (f.subscribed && !lsub && (ret.has('SUBSCRIBED') || select.has('SUBSCRIBED'))) attrs.push('\\Subscribed');
    if (f.special_use && !lsub) attrs.push(f.special_use);
    const extended = info && !lsub && select.has('RECURSIVEMATCH') ? ' (CHILDINFO ("SUBSCRIBED"))' : '';
    s.send(`* ${cmd} (${attrs.join(' ')}) "${DELIMITER}" ${astr(f.name)}${extended}`);
    if (statusWanted.length && meets(f) && !gone) s.send(`* STATUS ${astr(f.name)} ${await status(f, statusWanted)}`);
  }
  await s.finish(tag, `${cmd} completed`);
}
