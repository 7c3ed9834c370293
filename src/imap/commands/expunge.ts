import { targets } from './fetch.js';
import type { Parser } from '../protocol/parser.js';
import { ImapNo, type CommandSpec, type Session } from '../protocol/session.js';
import { FolderView } from '../view.js';

/**
 * Removes the messages marked \Deleted (of `uidSet` only, for UID EXPUNGE): each is the soft delete
 * of DELETE /v1/emails/{id} (tombstone in sync, quota freed, email.deleted). Answers what to announce.
 */
async function expungeDeleted(s: Session, p: Parser | null, uid: boolean): Promise<Array<{ seq: number; uid: number }>> {
  const v = s.view!;
  if (p) await s.sync(); else await s.refresh(); // CLOSE announces nothing
  let list = v.entries;
  if (p && uid) {
    p.sp();
    list = targets(s, p.seqSet(), true);
  }
  p?.end();
  const doomed = list.filter((e) => ` ${e.flags} `.includes(' \\Deleted '));
  await s.store.messages.expunge(s.login!.tenantId, doomed.map((e) => e.id));
  return v.remove(doomed.map((e) => e.id));
}

export const expungeCommands: Record<string, CommandSpec> = {
  EXPUNGE: {
    states: ['selected'],
    uid: true,
    async run(s, tag, p, o) {
      if (!o.uid) p.end();
      if (s.view!.readOnly) throw new ImapNo('the folder is open read-only', 'READ-ONLY');
      const removed = await expungeDeleted(s, p, o.uid);
      // Kept searches hear of their expunged messages by the numbers they had, before the EXPUNGEs.
      if (s.liveSearches.size) await s.deps.updateLiveSearches?.(s, s.view!.takeRemoved());
      for (const line of FolderView.removalLines(removed, s.qresync)) s.send(line);
      await s.finish(tag, `${o.uid ? 'UID ' : ''}EXPUNGE completed`);
    },
  },
  CLOSE: {
    states: ['selected'],
    async run(s, tag, p) {
      p.end();
      // CLOSE expunges without announcing (RFC 9051 6.4.1); read-only folders are left as they are.
      if (!s.view!.readOnly) await expungeDeleted(s, null, false);
      s.view = null;
      s.state = 'auth';
      s.ok(tag, 'CLOSE completed');
    },
  },
};
