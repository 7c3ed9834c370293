import type { FolderEntry, SummaryRow } from '../../emails/folders/index.js';
import type { Session } from '../protocol/session.js';
import { imapSummary, type ImapSummary } from '../../message/summary.js';

/** A message's header-sync facts as FETCH uses them. */
export interface Summarised {
  receivedAt: number;
  /** Null only when not asked for. */
  summary: ImapSummary | null;
}

/**
 * The header-sync rows of a run of a view's entries (in UID order), read in one query for their
 * UID range; entries missing from it (moved or renamed away since the view last looked) in one more,
 * by id. With `summaries`, a message without a kept summary (stored before they were kept, or too
 * large to summarise at delivery) gets it from its bytes now, and it is written back, so each
 * message is parsed at most once. A message gone meanwhile is missing from the answer.
 */
export async function summarise(s: Session, entries: FolderEntry[], summaries: boolean): Promise<Map<number, Summarised>> {
  const out = new Map<number, Summarised>();
  if (entries.length === 0) return out;
  const v = s.view!;
  const messages = s.store.messages;
  const mailboxId = s.login!.mailboxId;
  const wanted = new Set(entries.map((e) => e.id));
  const rows: SummaryRow[] = await messages.summaries(mailboxId, { folder: v.folder.name, fromUid: entries[0].uid, toUid: entries[entries.length - 1].uid });
  const found = new Set(rows.map((r) => r.id));
  const missing = entries.filter((e) => !found.has(e.id)).map((e) => e.id);
  if (missing.length > 0) rows.push(...await messages.summaries(mailboxId, { ids: missing }));
  const computed: Array<{ id: number; summary: ImapSummary }> = [];
  for (const r of rows) {
    if (!wanted.has(r.id)) continue;
    let summary = r.summary;
    if (summaries && !summary) {
      try {
        summary = imapSummary(await s.raw!(r.id));
      } catch {
        continue; // expunged meanwhile
      }
      computed.push({ id: r.id, summary });
    }
    out.set(r.id, { receivedAt: r.receivedAt, summary });
  }
  if (computed.length > 0) {
    await messages.saveSummaries(computed).catch((err: unknown) => s.deps.logger.warn({ err }, 'could not keep IMAP summaries'));
  }
  return out;
}
