import { formatSet } from '../protocol/parser.js';
import type { Key } from './search.js';
import type { CommandSpec, LiveSearch, Session } from '../protocol/session.js';

export type { LiveSearch };

/** A quoted tag for ESEARCH's (TAG "...") correlator. */
export const tagText = (tag: string) => `"${tag.replace(/[\\"]/g, '')}"`;

/**
 * After a command, each kept search is run again over the folder as the client now knows it, and
 * what joined or left its result is told: `ADDTO (position numbers)`, `REMOVEFROM (position
 * numbers)`, in message numbers or UIDs as the search was asked. A message expunged is told too,
 * by the number it had (view.ts keeps the removals of the command).
 */
export async function updateLiveSearches(s: Session, removed: Array<{ seq: number; uid: number }>, evaluate: (program: Key) => Promise<number[]>): Promise<void> {
  const v = s.view;
  if (!v) return;
  for (const live of s.liveSearches.values()) {
    // Only SEARCH (search.ts) keeps live searches, and it keeps its own program: a Key.
    const now = await evaluate(live.program as Key);
    const had = new Set(live.uids);
    const has = new Set(now);
    const gone = live.uids.filter((u) => !has.has(u));
    const goneNumbers = gone.map((u) => (live.uid ? u : removed.find((r) => r.uid === u)?.seq ?? (v.byUid(u) ? v.seqOf(v.byUid(u)!) : 0))).filter((n) => n > 0);
    if (gone.length) s.send(`* ESEARCH (TAG ${tagText(live.tag)})${live.uid ? ' UID' : ''} REMOVEFROM (${live.uids.indexOf(gone[0]) + 1} ${formatSet(goneNumbers)})`);
    const added = now.filter((u) => !had.has(u));
    const addedNumbers = added.map((u) => (live.uid ? u : v.seqOf(v.byUid(u)!)));
    if (added.length) s.send(`* ESEARCH (TAG ${tagText(live.tag)})${live.uid ? ' UID' : ''} ADDTO (${now.indexOf(added[0]) + 1} ${formatSet(addedNumbers)})`);
    live.uids = now;
  }
}

export const contextCommands: Record<string, CommandSpec> = {
  /** CANCELUPDATE "tag" ...: stops updating those searches. */
  CANCELUPDATE: {
    states: ['selected'],
    async run(s, tag, p) {
      const tags: string[] = [];
      while (p.maybeSp()) tags.push(p.string().toString('utf8'));
      p.end();
      if (tags.length === 0) p.fail('tag');
      for (const t of tags) s.liveSearches.delete(t);
      await s.finish(tag, 'CANCELUPDATE completed');
    },
  },
};
