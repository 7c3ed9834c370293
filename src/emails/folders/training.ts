import type { Db } from '../../db/connection.js';
import { listOf } from '../../db/json-list.js';
import type { SpamClass, SpamTraining, TrainingEvent } from '../../spam/training.js';

/** What a message was before a change: its folder, tenant and stored flags. */
export type Before = Map<number, { folder: string; tenant_id: number; flags: string }>;

/**
 * The spam filter's training as folder changes feed it (DECISIONS.md section 18): the change's
 * transaction trains, and the other trainers (rspamd's controller) are told once it committed.
 */
export function folderTraining(training: SpamTraining | undefined) {
  return {
    enabled: training !== undefined,

    /** Live messages of a mailbox as they are before a change (empty when nothing trains). */
    async before(trx: Db, mailboxId: number, ids: number[]): Promise<Before> {
      if (!training || ids.length === 0) return new Map();
      const rows = await trx.selectFrom('emails').select(['id', 'folder', 'tenant_id', 'flags']).where('id', 'in', listOf(trx, ids))
        .where('mailbox_id', '=', mailboxId).where('deleted_at', 'is', null).execute();
      return new Map(rows.map((r) => [r.id, r]));
    },

    /** Trains `emailIds` as `cls` inside `trx`; answers what to tell the other trainers after the commit. */
    async train(trx: Db, tenantId: number, mailboxId: number, emailIds: number[], cls: SpamClass | null): Promise<TrainingEvent | null> {
      if (!training || !cls || emailIds.length === 0) return null;
      await training.train(trx, emailIds, cls);
      return { tenantId, mailboxId, emailIds, cls };
    },

    /** Tells the other trainers of committed training. */
    committed(events: Array<TrainingEvent | null>): void {
      for (const e of events) if (e) training?.committed(e);
    },
  };
}
export type FolderTraining = ReturnType<typeof folderTraining>;
