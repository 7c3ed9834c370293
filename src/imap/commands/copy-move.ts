import { targets } from './fetch.js';
import { folderNamed } from './mailboxes.js';
import { formatSet, type Parser } from '../protocol/parser.js';
import { ImapNo, type CommandSpec, type Session } from '../protocol/session.js';
import { FolderView } from '../view.js';

/**
 * COPY and MOVE (RFC 9051 6.4.7/6.4.8, UIDPLUS's COPYUID). A copy is a new email in the target
 * folder; a move changes the message's folder and UID (an update for sync, not a deletion), so
 * webhooks see no email.deleted for it.
 */
async function copyOrMove(s: Session, tag: string, p: Parser, uid: boolean, move: boolean): Promise<void> {
  p.sp();
  const set = p.seqSet();
  p.sp();
  const name = p.mailbox();
  p.end();
  const v = s.view!;
  if (move && v.readOnly) throw new ImapNo('the folder is open read-only', 'READ-ONLY');
  const dest = await folderNamed(s, name).catch(() => { throw new ImapNo('no such folder', 'TRYCREATE'); });
  await s.sync();
  const list = targets(s, set, uid);
  const cmd = `${uid ? 'UID ' : ''}${move ? 'MOVE' : 'COPY'}`;
  if (list.length === 0) return s.finish(tag, `${cmd} completed (nothing to do)`);
  if (!move) {
    const newUids = await s.store.messages.copy(s.login!.mailboxId, list.map((e) => e.id), dest.id === v.folder.id ? v.folder.name : dest.name);
    return s.finish(tag, `[COPYUID ${dest.id} ${formatSet(list.map((e) => e.uid))} ${formatSet(newUids)}] ${cmd} completed`);
  }
  // Into the same folder the messages get new UIDs: EXPUNGE of the old numbers, EXISTS of the new.
  const newUids = await s.store.messages.move(s.login!.mailboxId, list.map((e) => e.id), dest.name);
  s.send(`* OK [COPYUID ${dest.id} ${formatSet(list.map((e) => e.uid))} ${formatSet(newUids)}] moved`);
  for (const line of FolderView.removalLines(v.remove(list.map((e) => e.id)), s.qresync)) s.send(line);
  await s.finish(tag, `${cmd} completed`);
}

export const copyMoveCommands: Record<string, CommandSpec> = {
  COPY: { states: ['selected'], uid: true, run: (s, tag, p, o) => copyOrMove(s, tag, p, o.uid, false) },
  MOVE: { states: ['selected'], uid: true, run: (s, tag, p, o) => copyOrMove(s, tag, p, o.uid, true) },
};
