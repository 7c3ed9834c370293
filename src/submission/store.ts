import { sql } from 'kysely';
import type { Db } from '../db/connection.js';

/** The window of the daily limit: a rolling 24 hours. */
export const DAY_MS = 24 * 3_600_000;

/** A mailbox as a sender: the one it logs in as, or the one an API `from` names or leads to. */
export interface SenderMailbox {
  id: number;
  tenantId: number;
  address: string;
}

/** Every query of submission, and nothing else. */
export const submissionStore = {
  /**
   * The addresses a mailbox may send as (DECISIONS.md section 13): its own, and every active alias
   * with sender_allowed whose goto includes it. A catch-all grants nothing.
   */
  async senderAddresses(db: Db, mailbox: SenderMailbox): Promise<Set<string>> {
    const rows = await db.selectFrom('aliases').select('address')
      .where('tenant_id', '=', mailbox.tenantId).where('active', '=', 1).where('sender_allowed', '=', 1)
      .where('is_catch_all', '=', 0).where('status', '=', 'active')
      .where(sql<boolean>`EXISTS (SELECT 1 FROM json_each(aliases.goto) AS g WHERE g.value = ${mailbox.address})`)
      .execute();
    return new Set([mailbox.address, ...rows.map((r) => r.address)]);
  },

  /** The tenant's active mailbox at an address, or undefined. */
  mailbox: (db: Db, tenantId: number, address: string) =>
    db.selectFrom('mailboxes').select(['id', 'tenant_id', 'address']).where('tenant_id', '=', tenantId)
      .where('address', '=', address).where('status', '=', 'active').executeTakeFirst()
      .then((r) => (r ? { id: r.id, tenantId: r.tenant_id, address: r.address } : undefined)),

  /** The goto of the tenant's active, non-catch-all alias with sender_allowed at an address, or undefined. */
  sendingAlias: (db: Db, tenantId: number, address: string) =>
    db.selectFrom('aliases').select('goto').where('tenant_id', '=', tenantId).where('address', '=', address)
      .where('active', '=', 1).where('sender_allowed', '=', 1).where('is_catch_all', '=', 0).where('status', '=', 'active')
      .executeTakeFirst().then((r) => (r ? (JSON.parse(r.goto) as string[]) : undefined)),

  /** The first of `addresses` (in order) that is an active mailbox of the tenant. */
  async firstMailbox(db: Db, tenantId: number, addresses: string[]): Promise<SenderMailbox | undefined> {
    if (addresses.length === 0) return undefined;
    const rows = await db.selectFrom('mailboxes').select(['id', 'tenant_id', 'address']).where('tenant_id', '=', tenantId)
      .where('address', 'in', addresses).where('status', '=', 'active').execute();
    const byAddress = new Map(rows.map((r) => [r.address, r]));
    const first = addresses.map((a) => byAddress.get(a)).find((r) => r !== undefined);
    return first ? { id: first.id, tenantId: first.tenant_id, address: first.address } : undefined;
  },

  /** The id of the message with `uid` in a folder of a mailbox (the Sent copy an outbound item came from). */
  emailIdAt: (db: Db, mailboxId: number, folder: string, uid: number) =>
    db.selectFrom('emails').select('id').where('mailbox_id', '=', mailboxId).where('folder', '=', folder).where('uid', '=', uid)
      .executeTakeFirst().then((r) => r?.id ?? null),

  /** Recipients the mailbox sent to in the 24 hours before `now`. */
  sentRecipients: (db: Db, mailboxId: number, now: number) =>
    db.selectFrom('submission_sends').select((eb) => eb.fn.sum<number>('recipients').as('n'))
      .where('mailbox_id', '=', mailboxId).where('at', '>', now - DAY_MS).executeTakeFirst()
      .then((r) => Number(r?.n ?? 0)),

  /** Counts a submission's recipients, and forgets counts too old to matter. */
  async recordSend(db: Db, mailboxId: number, recipients: number, now: number): Promise<void> {
    await db.insertInto('submission_sends').values({ mailbox_id: mailboxId, recipients, at: now }).execute();
    await db.deleteFrom('submission_sends').where('mailbox_id', '=', mailboxId).where('at', '<=', now - DAY_MS).execute();
  },
};
export type SubmissionStore = typeof submissionStore;
