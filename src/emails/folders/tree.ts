import { sql } from 'kysely';
import { folderStore, type FolderRow } from '../../mailstore/folder-store.js';
import { removeAll, type FolderDeps } from './deps.js';

/** The folders of a mailbox: list, create, delete, rename, subscribe, and the mailbox's quota. */
export function folderTreeQueries({ db, markers, clock, service, changed }: FolderDeps) {
  return {
    /** The folders of a mailbox, made first if the mailbox has none yet. */
    async folders(mailboxId: number): Promise<FolderRow[]> {
      const list = await folderStore.list(db, mailboxId);
      if (list.some((f) => f.name === 'INBOX')) return list;
      await folderStore.ensureDefaults(db, [mailboxId], clock.now());
      return folderStore.list(db, mailboxId);
    },

    folder: (mailboxId: number, name: string) => folderStore.byName(db, mailboxId, name),

    /** Creates a folder (and missing parents); false when it exists. */
    async createFolder(mailboxId: number, name: string): Promise<boolean> {
      const parts = name.split('/');
      for (let i = 1; i < parts.length; i++) await folderStore.create(db, mailboxId, parts.slice(0, i).join('/'), clock.now());
      return (await folderStore.create(db, mailboxId, name, clock.now())) !== undefined;
    },

    /** Deletes a folder; its live mail is expunged first (soft deletes with their events). */
    async deleteFolder(tenantId: number, mailboxId: number, folder: FolderRow): Promise<void> {
      const ids = (await sql<{ id: number }>`SELECT id FROM emails WHERE mailbox_id = ${mailboxId} AND folder = ${folder.name} AND deleted_at IS NULL`.execute(db)).rows.map((r) => r.id);
      await removeAll(service, tenantId, ids);
      await folderStore.remove(db, folder.id);
    },

    /** Renames a folder and those below it; their mail follows, each message an update for sync. */
    async renameFolder(mailboxId: number, from: string, to: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        await folderStore.rename(trx, mailboxId, from, to);
        const rows = (await sql<{ id: number; folder: string }>`SELECT id, folder FROM emails WHERE mailbox_id = ${mailboxId}
          AND (folder = ${from} OR substr(folder, 1, ${from.length + 1}) = ${from + '/'})`.execute(trx)).rows;
        for (const r of rows) {
          await trx.updateTable('emails').set({ folder: to + r.folder.slice(from.length), updated_seq: markers.next() }).where('id', '=', r.id).execute();
        }
        await markers.flush(trx);
      });
      changed(mailboxId);
    },

    setSubscribed: (folderId: number, on: boolean) => folderStore.setSubscribed(db, folderId, on),

    /** The mailbox's quota (MB, 0 = unlimited) and bytes used. */
    quota: (mailboxId: number) =>
      db.selectFrom('mailboxes').select(['quota_mb', 'used_bytes']).where('id', '=', mailboxId).executeTakeFirstOrThrow(),
  };
}
