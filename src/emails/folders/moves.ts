import { sql } from 'kysely';
import { INDEXED_BODY_CHARS, plainText } from '../../message/text.js';
import { moveTraining, type TrainingEvent } from '../../spam/training.js';
import { copyVerdict } from '../../spam/verdicts.js';
import { removeAll, reserveUids, type FolderDeps } from './deps.js';

/** EXPUNGE, MOVE and COPY: mail leaving a folder or copied into another with new UIDs. */
export function moveQueries({ db, store, markers, clock, service, changed, training }: FolderDeps) {
  return {
    /** Expunges: the soft delete of DELETE /v1/emails/{id} (tombstone, quota, email.deleted). */
    async expunge(tenantId: number, ids: number[]): Promise<void> {
      await removeAll(service, tenantId, ids);
    },

    /** Moves messages to another folder of the mailbox: new UIDs there, one update each (not a deletion). */
    async move(mailboxId: number, ids: number[], folder: string): Promise<number[]> {
      const uids: number[] = [];
      const events: Array<TrainingEvent | null> = [];
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        // Into Junk trains spam, out of Junk (not to Trash) ham: judged by where each message was.
        const was = await training.before(trx, mailboxId, ids);
        for (const cls of ['spam', 'ham'] as const) {
          const judged = ids.filter((id) => was.has(id) && moveTraining(was.get(id)!.folder, folder) === cls);
          if (judged.length > 0) events.push(await training.train(trx, was.get(judged[0])!.tenant_id, mailboxId, judged, cls));
        }
        const first = await reserveUids(trx, mailboxId, folder, ids.length);
        for (const [i, id] of ids.entries()) {
          await trx.updateTable('emails').set({ folder, uid: first + i, updated_seq: markers.next() })
            .where('id', '=', id).where('mailbox_id', '=', mailboxId).where('deleted_at', 'is', null).execute();
          uids.push(first + i);
        }
        await markers.flush(trx);
      });
      training.committed(events);
      changed(mailboxId);
      return uids;
    },

    /**
     * Copies messages into a folder of the mailbox: new emails sharing the source's bytes (the raw
     * row of SMTP mail, or a copy of the kept rendering), contents, attachments and index entries;
     * they count toward the quota. Answers the new UIDs in order.
     */
    async copy(mailboxId: number, ids: number[], folder: string): Promise<number[]> {
      const uids: number[] = [];
      const events: Array<TrainingEvent | null> = [];
      await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        // A copy into Junk trains spam (a copy out of it trains nothing: only a move says "not junk").
        if (training.enabled && folder === 'Junk') {
          const was = await training.before(trx, mailboxId, ids);
          const judged = ids.filter((id) => was.has(id) && was.get(id)!.folder !== 'Junk');
          if (judged.length > 0) events.push(await training.train(trx, was.get(judged[0])!.tenant_id, mailboxId, judged, 'spam'));
        }
        const first = await reserveUids(trx, mailboxId, folder, ids.length);
        let nextId = await store.nextEmailId(trx);
        const now = clock.now();
        let added = 0;
        for (const [i, id] of ids.entries()) {
          const src = await trx.selectFrom('emails').selectAll().where('id', '=', id).where('mailbox_id', '=', mailboxId).where('deleted_at', 'is', null).executeTakeFirst();
          const contents = await trx.selectFrom('email_contents').selectAll().where('email_id', '=', id).executeTakeFirst();
          if (!src || !contents) continue;
          const newId = nextId++;
          const { id: _old, ...rest } = src;
          await trx.insertInto('emails').values({ ...rest, id: newId, folder, uid: first + i, imported: 1, updated_seq: markers.next(), created_at: now }).execute();
          await trx.insertInto('email_contents').values({ ...contents, email_id: newId }).execute();
          await sql`INSERT INTO attachments (email_id, filename, content_type, size, content_id, disposition, sha256)
            SELECT ${newId}, filename, content_type, size, content_id, disposition, sha256 FROM attachments WHERE email_id = ${id} ORDER BY id`.execute(trx);
          await sql`INSERT INTO email_raw (email_id, raw) SELECT ${newId}, raw FROM email_raw WHERE email_id = ${id}`.execute(trx);
          // The same bytes: the same spam trace header in front of them.
          await copyVerdict(trx, id, newId);
          // The same bytes: the same summary (none yet for mail stored before summaries were kept).
          await sql`INSERT INTO email_imap (email_id, size, envelope, bodystructure)
            SELECT ${newId}, size, envelope, bodystructure FROM email_imap WHERE email_id = ${id}`.execute(trx);
          const text = plainText(contents.body_text, contents.body_html).slice(0, INDEXED_BODY_CHARS);
          await store.indexFts(trx, [{ rowid: newId, subject: src.subject, body: text, from_email: src.from_email, from_name: src.from_name ?? '' }]);
          added += src.size;
          uids.push(first + i);
        }
        if (added > 0) await trx.updateTable('mailboxes').set({ used_bytes: sql`used_bytes + ${added}` }).where('id', '=', mailboxId).execute();
        await markers.flush(trx);
      });
      training.committed(events);
      changed(mailboxId);
      return uids;
    },

  };
}
