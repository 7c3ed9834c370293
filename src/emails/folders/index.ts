import type { Clock } from '../../clock.js';
import { backendOf } from '../../db/backend.js';
import type { Db } from '../../db/connection.js';
import type { MailChanges } from '../mail-changes.js';
import type { Markers } from '../../mailstore/markers.js';
import type { SpamTraining } from '../../spam/training.js';
import { folderTraining } from './training.js';
import type { EmailService } from '../service.js';
import type { EmailStore } from '../store.js';
import { appendQueries } from './appends.js';
import type { FolderDeps } from './deps.js';
import { entryQueries } from './entries.js';
import { flagQueries } from './flags.js';
import { moveQueries } from './moves.js';
import { folderSnapshots } from './snapshots.js';
import { postgresFolderSearch } from './postgres/search.js';
import { sqliteFolderSearch } from './sqlite/search.js';
import { summaryQueries } from './summaries.js';
import { subscriptionQueries } from './subscriptions.js';
import { textQueries } from './text-search.js';
import { folderTreeQueries } from './tree.js';

export type { AppendInput, Change, FlagWrite, FolderEntry, MessageMeta } from './types.js';
export { OverQuotaError } from './types.js';
export type { FolderRow } from '../../mailstore/folder-store.js';
export type { SummaryRow } from './summaries.js';

/**
 * The folder view of stored mail that IMAP needs (DECISIONS.md section 14): the messages of a
 * folder by UID, changes since a marker, flags, and the moves, copies and appends that give mail new
 * UIDs. Reads and deletes of whole messages go through the email service, so the three faces
 * (REST, IMAP, webhooks) share one state. The one query that differs by database, the full-text
 * match, is chosen here from the connection's backend (ports.ts).
 */
export function createFolderMessages({ db, store, markers, clock, service, changes, training }: {
  db: Db; store: EmailStore; markers: Markers; clock: Clock; service: EmailService;
  /** Told of every committed change made here (IDLE wakes on it); reads and deletes tell it through the service. */
  changes?: MailChanges;
  /**
   * The spam filter's training (src/spam/training.ts): moves and copies into Junk, APPEND into
   * Junk and $Junk train spam; moves out of Junk (not to Trash) and $NotJunk train ham.
   */
  training?: SpamTraining;
}) {
  const search = backendOf(db).choose({ sqlite: sqliteFolderSearch, postgres: postgresFolderSearch });
  const deps: FolderDeps = { db, store, markers, clock, service, search, changed: (mailboxId) => changes?.committed([mailboxId]), training: folderTraining(training) };
  const snapshots = folderSnapshots(db);
  return {
    ...entryQueries(deps),
    /** A folder's live messages in UID order as SELECT opens it: kept between SELECTs and caught up (snapshots.ts). */
    folderEntries: (tenantId: number, mailboxId: number, folder: string) => snapshots.entries(tenantId, mailboxId, folder),
    ...summaryQueries(db, store),
    ...textQueries(db),
    ...subscriptionQueries(db),
    ...flagQueries(deps),
    ...moveQueries(deps),
    ...appendQueries(deps),
    /** Ids among `ids` whose indexed subject, body or sender match a full-text expression (emails/fts.ts). */
    ftsMatching: (match: string, ids: number[]) => search.ftsMatching(db, match, ids),
    ...folderTreeQueries(deps),
  };
}
export type FolderMessages = ReturnType<typeof createFolderMessages>;
