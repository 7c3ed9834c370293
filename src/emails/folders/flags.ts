import type { Db } from '../../db/connection.js';
import { flagTraining, type TrainingEvent } from '../../spam/training.js';
import type { FolderDeps } from './deps.js';
import type { FlagWrite } from './types.js';

/** STORE's writes: stored flags, \Seen cleared, and \Seen set through the email service (email.read). */
export function flagQueries({ db, markers, service, changed, training }: FolderDeps) {
  /** Stored flags of messages, inside the caller's transaction (markers ready). */
  async function flagWrites(trx: Db, mailboxId: number, writes: FlagWrite[], unchangedSince: number | undefined, events: Array<TrainingEvent | null>): Promise<Map<number, number>> {
    const done = new Map<number, number>();
    const was = await training.before(trx, mailboxId, writes.map((c) => c.id));
    for (const c of writes) {
      const marker = markers.next();
      let q = trx.updateTable('emails').set({ flags: c.flags, updated_seq: marker })
        .where('id', '=', c.id).where('mailbox_id', '=', mailboxId).where('deleted_at', 'is', null);
      if (unchangedSince !== undefined) q = q.where('updated_seq', '<=', unchangedSince);
      if (Number((await q.executeTakeFirst()).numUpdatedRows) === 1) done.set(c.id, marker);
    }
    // $Junk and $NotJunk set by a client (Thunderbird's buttons) train.
    for (const cls of ['spam', 'ham'] as const) {
      const ids = writes.filter((c) => done.has(c.id) && was.has(c.id) && flagTraining(was.get(c.id)!.flags, c.flags) === cls).map((c) => c.id);
      if (ids.length > 0) events.push(await training.train(trx, was.get(ids[0])!.tenant_id, mailboxId, ids, cls));
    }
    return done;
  }

  /** \Seen cleared of messages, inside the caller's transaction (markers ready). */
  async function unreadWrites(trx: Db, mailboxId: number, ids: number[]): Promise<void> {
    for (const id of ids) {
      await trx.updateTable('emails').set({ read_at: null, updated_seq: markers.next() })
        .where('id', '=', id).where('mailbox_id', '=', mailboxId).where('read_at', 'is not', null).where('deleted_at', 'is', null).execute();
    }
  }

  return {
    /**
     * Writes new stored flags (not \Seen) of messages, each with a new marker; with `unchangedSince`
     * only messages not changed after it (CONDSTORE). Answers the ids written and their markers.
     */
    async writeFlags(mailboxId: number, changes: FlagWrite[], unchangedSince?: number): Promise<Map<number, number>> {
      if (changes.length === 0) return new Map();
      const events: Array<TrainingEvent | null> = [];
      const done = await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const done = await flagWrites(trx, mailboxId, changes, unchangedSince, events);
        await markers.flush(trx);
        return done;
      });
      training.committed(events);
      if (done.size > 0) changed(mailboxId);
      return done;
    },

    /** Clears \Seen (read_at) of messages; setting it goes through the service (email.read). */
    async markUnread(mailboxId: number, ids: number[]): Promise<void> {
      if (ids.length === 0) return;
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        await unreadWrites(trx, mailboxId, ids);
        await markers.flush(trx);
      });
      changed(mailboxId);
    },

    /**
     * IMAP STORE in one transaction: the stored flags (`writeFlags`), \Seen cleared of `unread`
     * and set of `read` (one email.read each, through the service). A refused write rolls all of
     * it back and throws. Answers the ids whose flags were written.
     */
    async storeFlags(tenantId: number, mailboxId: number, o: { writes: FlagWrite[]; read: number[]; unread: number[]; unchangedSince?: number }): Promise<Map<number, number>> {
      if (o.writes.length === 0 && o.read.length === 0 && o.unread.length === 0) return new Map();
      const events: Array<TrainingEvent | null> = [];
      const { alongside } = await service.markReadMany(tenantId, o.read, async (trx) => {
        const done = await flagWrites(trx, mailboxId, o.writes, o.unchangedSince, events);
        await unreadWrites(trx, mailboxId, o.unread);
        return done;
      });
      training.committed(events);
      changed(mailboxId);
      return alongside!;
    },

    /** Sets \Seen of messages in one transaction, one email.read each; throws (changing nothing) when refused. */
    markRead: (tenantId: number, ids: number[]) => service.markReadMany(tenantId, ids).then((r) => r.marked),

  };
}
