import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { notFound } from '../errors.js';
import type { FolderMessages } from '../emails/folder-messages.js';
import { JUNK_FOLDER, JUNK_KEYWORD, NOT_JUNK_KEYWORD } from './filing.js';
import { rememberCorrespondents } from './reputation.js';
import type { SpamTraining } from './training.js';

/** Flags with `add` in and `drop` out (space-separated, as stored). */
function withKeyword(flags: string, add: string, drop: string): string {
  const list = flags.split(' ').filter((f) => f !== '' && f.toLowerCase() !== drop.toLowerCase() && f.toLowerCase() !== add.toLowerCase());
  return [...list, add].join(' ');
}

/**
 * POST /v1/emails/{email}/junk and /not-junk (DECISIONS.md section 18): the message moves to Junk
 * (or back to INBOX), gets $Junk (or $NotJunk), and trains the filter, the same path an IMAP
 * client's move and keyword take (folder-messages.ts), then explicitly, for mail that was filed
 * where the user leaves it. Not junk also makes the sender a known correspondent.
 */
export function createJudgement(deps: { db: Db; messages: FolderMessages; training: SpamTraining; now: () => number }) {
  const { db, messages, training } = deps;
  async function judge(tenantId: number, id: number, junk: boolean): Promise<void> {
    const e = await db.selectFrom('emails').select(['id', 'mailbox_id', 'folder', 'from_email']).where('id', '=', id).where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null).executeTakeFirst();
    if (!e) throw notFound('Email not found');
    const target = junk ? JUNK_FOLDER : 'INBOX';
    if (junk ? e.folder !== JUNK_FOLDER : e.folder === JUNK_FOLDER) await messages.move(e.mailbox_id, [id], target);
    const flags = (await db.selectFrom('emails').select('flags').where('id', '=', id).executeTakeFirst())?.flags ?? '';
    await messages.writeFlags(e.mailbox_id, [{ id, flags: junk ? withKeyword(flags, JUNK_KEYWORD, NOT_JUNK_KEYWORD) : withKeyword(flags, NOT_JUNK_KEYWORD, JUNK_KEYWORD) }]);
    const cls = junk ? 'spam' : 'ham';
    // Trained the same way already (by the move or the keyword), this changes nothing.
    await db.transaction().execute(async (trx) => {
      await training.train(trx, [id], cls);
      if (!junk) await rememberCorrespondents(trx, e.mailbox_id, [e.from_email], deps.now());
    });
    training.committed({ tenantId, mailboxId: e.mailbox_id, emailIds: [id], cls });
  }
  return { junk: (tenantId: number, id: number) => judge(tenantId, id, true), notJunk: (tenantId: number, id: number) => judge(tenantId, id, false) };
}

/** Ids of live junk filed before `before` (at most `limit`), with their tenant: what retention deletes. */
export async function expiredJunk(db: Db, before: number, limit: number): Promise<Array<{ id: number; tenant_id: number }>> {
  const r = await sql<{ id: number; tenant_id: number }>`SELECT id, tenant_id FROM emails
    WHERE folder = ${JUNK_FOLDER} AND deleted_at IS NULL AND created_at < ${before} ORDER BY id LIMIT ${limit}`.execute(db);
  return r.rows.map((x) => ({ id: Number(x.id), tenant_id: Number(x.tenant_id) }));
}
