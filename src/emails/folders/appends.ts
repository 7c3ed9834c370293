import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { fits } from '../../mailstore/commits.js';
import type { TrainingEvent } from '../../spam/training.js';
import { INDEXED_BODY_CHARS, plainText, snippetOf } from '../../message/text.js';
import { reserveUids, type FolderDeps } from './deps.js';
import { OverQuotaError, type AppendInput } from './types.js';

/** APPEND and imports: messages stored as given into a folder, counted toward the quota. */
export function appendQueries({ db, store, markers, clock, changed, training }: FolderDeps) {
  /** One appended message's rows, inside the caller's transaction (markers ready); answers its UID and id. */
  async function insertAppended(trx: Db, tenantId: number, mailboxId: number, folder: string, m: AppendInput): Promise<{ uid: number; id: number }> {
    const box = await trx.selectFrom('mailboxes').select(['quota_mb', 'used_bytes', 'address']).where('id', '=', mailboxId).executeTakeFirstOrThrow();
    if (!fits(box, m.raw.length)) throw new OverQuotaError('mailbox over quota');
    const uid = await reserveUids(trx, mailboxId, folder, 1);
    const id = await store.nextEmailId(trx);
    const now = clock.now();
    const text = plainText(m.bodyText, m.bodyHtml);
    const state = (await store.searchState(trx, [tenantId])).get(tenantId);
    const receivedMax = Math.max(state ?? m.receivedAt, m.receivedAt);
    if (receivedMax !== state) await store.saveSearchState(trx, tenantId, receivedMax);
    const stored = m.flags.filter((f) => f.toLowerCase() !== '\\seen' && f.toLowerCase() !== '\\recent');
    await trx.insertInto('emails').values({
      id, tenant_id: tenantId, mailbox_id: mailboxId, message_id: m.messageId, from_email: m.fromEmail, from_name: m.fromName,
      to_email: m.toEmail || box.address, subject: m.subject, snippet: snippetOf(text), received_at: m.receivedAt, received_max: receivedMax,
      size: m.raw.length, has_attachments: m.hasAttachments ? 1 : 0, read_at: m.flags.some((f) => f.toLowerCase() === '\\seen') ? now : null,
      deleted_at: null, updated_seq: markers.next(), created_at: now, folder, uid, flags: stored.join(' '), imported: 1,
    }).execute();
    await trx.insertInto('email_contents').values({
      email_id: id, inbound_id: null, cc: JSON.stringify(m.cc), bcc: JSON.stringify(m.bcc), headers: JSON.stringify(m.headers),
      auth: null, body_text: m.bodyText, body_html: m.bodyHtml,
    }).execute();
    await trx.insertInto('email_raw').values({ email_id: id, raw: m.raw }).execute();
    await store.saveImap(trx, [{ email_id: id, ...m.imap }]);
    await store.indexFts(trx, [{ rowid: id, subject: m.subject, body: text.slice(0, INDEXED_BODY_CHARS), from_email: m.fromEmail, from_name: m.fromName ?? '' }]);
    await trx.updateTable('mailboxes').set({ used_bytes: sql`used_bytes + ${m.raw.length}` }).where('id', '=', mailboxId).execute();
    return { uid, id };
  }

  return {
    /**
     * Stores an APPENDed message in a folder (no email.received: only delivery fires it), its bytes
     * kept as given; refuses with OverQuotaError when the quota has no room. Answers its UID.
     */
    async append(tenantId: number, mailboxId: number, folder: string, m: AppendInput): Promise<number> {
      let event: TrainingEvent | null = null;
      const uid = await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        const { uid, id } = await insertAppended(trx, tenantId, mailboxId, folder, m);
        // APPEND into Junk trains spam (a client filing what it judged junk).
        if (folder === 'Junk') event = await training.train(trx, tenantId, mailboxId, [id], 'spam');
        await markers.flush(trx);
        return uid;
      });
      training.committed([event]);
      changed(mailboxId);
      return uid;
    },

    /**
     * Stores messages in a folder the way APPEND does (no email.received, no filter), in one
     * transaction that also runs `alongside` (an import records its progress there, so the two
     * cannot disagree after a crash). Stops at the first message the quota has no room for and
     * commits those before it: answers how many were stored and whether the quota stopped it.
     */
    async appendMany(tenantId: number, mailboxId: number, folder: string, list: AppendInput[], alongside?: (trx: Db, stored: number) => Promise<void>): Promise<{ stored: number; overQuota: boolean }> {
      const out = await db.transaction().execute(async (trx) => {
        await markers.ready(trx);
        let stored = 0;
        let overQuota = false;
        for (const m of list) {
          try {
            await insertAppended(trx, tenantId, mailboxId, folder, m);
          } catch (err) {
            if (!(err instanceof OverQuotaError)) throw err;
            overQuota = true;
            break;
          }
          stored++;
        }
        await markers.flush(trx);
        if (alongside) await alongside(trx, stored);
        return { stored, overQuota };
      });
      if (out.stored > 0) changed(mailboxId);
      return out;
    },

  };
}
