import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { dml } from '../db/backend.js';

/** The window of the daily limit: a rolling 24 hours. */
export const DAY_MS = 24 * 3_600_000;

/** A mailbox as a sender: the one it logs in as, or the one an API `from` names or leads to. */
export interface SenderMailbox {
  id: number;
  tenantId: number;
  address: string;
}

/** Whether an alias's goto (a JSON array in a text column on both dialects) lists `address`. */
const gotoIncludes = (db: Db, address: string) => dml(db).jsonArrayIncludes(sql.ref('aliases.goto'), address);

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
      .where(gotoIncludes(db, mailbox.address))
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

  /** The mailbox's counted submissions of the 24 hours before `now`, oldest first (the daily ledger's start). */
  recentSends: (db: Db, mailboxId: number, now: number) =>
    db.selectFrom('submission_sends').select(['at', 'recipients']).where('mailbox_id', '=', mailboxId).where('at', '>', now - DAY_MS)
      .orderBy('at').orderBy('id').execute(),

  /** Counts submissions' recipients (one statement), and forgets their mailboxes' counts too old to matter. */
  async recordSends(db: Db, sends: Array<{ mailbox_id: number; recipients: number; at: number }>, now: number): Promise<void> {
    if (sends.length === 0) return;
    await db.insertInto('submission_sends').values(sends).execute();
    const boxes = [...new Set(sends.map((s) => s.mailbox_id))];
    await db.deleteFrom('submission_sends').where('mailbox_id', 'in', boxes).where('at', '<=', now - DAY_MS).execute();
  },
};
export type SubmissionStore = typeof submissionStore;
