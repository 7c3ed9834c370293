import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { folderStore } from '../mailstore/folder-store.js';

/** A new mailbox row. */
export interface NewMailbox {
  tenant_id: number;
  domain_id: number;
  address: string;
  display_name: string;
  password_hash: string;
  /** Quota in MB; 0 (the default) is unlimited. */
  quota_mb?: number;
  created_at: number;
}

// SQLite binds at most 32766 parameters; id lists are cut well below that.
const CHUNK = 500;
const chunks = <T>(list: T[]) => Array.from({ length: Math.ceil(list.length / CHUNK) }, (_, i) => list.slice(i * CHUNK, (i + 1) * CHUNK));

/** Which of these addresses are already taken by a mailbox or an alias (of anyone). */
async function takenAmong(db: Db, addresses: string[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (const part of chunks(addresses)) {
    const rows = await db.selectFrom('mailboxes').select('address').where('address', 'in', part)
      .union(db.selectFrom('aliases').select('address').where('address', 'in', part)).execute();
    for (const r of rows) taken.add(r.address);
  }
  return taken;
}

/** Every query of the mailboxes capability (mailboxes, their deletion, and password redaction). */
export function createMailboxStore() {
  return {
    /** A domain by id, with its owner and slot count, or undefined. */
    domainById: (db: Db, id: number) =>
      db.selectFrom('domains').select(['id', 'tenant_id', 'hostname', 'domain_type', 'total_mailbox_allowed']).where('id', '=', id).executeTakeFirst(),

    /** How many mailboxes a domain has. */
    countForDomain: (db: Db, domainId: number) =>
      db.selectFrom('mailboxes').select((eb) => eb.fn.countAll<number>().as('n')).where('domain_id', '=', domainId)
        .executeTakeFirstOrThrow().then((r) => Number(r.n)),

    /** Which of these addresses are already taken by a mailbox or an alias (of anyone). */
    takenAmong,

    /**
     * Addresses that queued or running create tasks for `hostname` will create and that do not
     * exist yet: they hold a slot and their name from the moment the request is accepted.
     */
    async pendingAddresses(db: Db, hostname: string): Promise<Set<string>> {
      const rows = await db.selectFrom('tasks').select('payload')
        .where('status', 'in', ['queued', 'running']).where('kind', 'in', ['mailbox.single', 'mailbox.bulk']).where('domain', '=', hostname)
        .execute();
      const planned = rows.flatMap((r) => {
        // A task whose stored payload is broken creates nothing (the queue sets it aside): it holds no name.
        let payload: { address?: string; addresses?: string[] };
        try { payload = JSON.parse(r.payload) ?? {}; } catch { return []; }
        return payload.addresses ?? (payload.address ? [payload.address] : []);
      });
      const taken = await takenAmong(db, planned);
      return new Set(planned.filter((a) => !taken.has(a)));
    },

    /** Inserts mailboxes (one statement per chunk). */
    async insert(db: Db, rows: NewMailbox[]): Promise<void> {
      for (const part of chunks(rows)) {
        await db.insertInto('mailboxes').values(part).execute();
        // Every mailbox has its IMAP folders from the start (DECISIONS.md section 14).
        await folderStore.ensureDefaultsByAddress(db, part.map((r) => r.address), part[0].created_at);
      }
    },

    /** A domain's mailboxes, ordered by address. */
    listForDomain: (db: Db, domainId: number) =>
      db.selectFrom('mailboxes').select(['id', 'address', 'status', 'quota_mb', 'created_at'])
        .where('domain_id', '=', domainId).orderBy('address').execute(),

    /** The tenant's mailbox with this address, or undefined. */
    ownedByAddress: (db: Db, tenantId: number, address: string) =>
      db.selectFrom('mailboxes').select(['id', 'domain_id']).where('tenant_id', '=', tenantId).where('address', '=', address).executeTakeFirst(),

    /** The tenant's mailboxes with these addresses (for the alias rules). */
    ownedAmong: async (db: Db, tenantId: number, addresses: string[]) => {
      const found = new Set<string>();
      for (const part of chunks(addresses)) {
        const rows = await db.selectFrom('mailboxes').select('address').where('tenant_id', '=', tenantId).where('address', 'in', part).execute();
        for (const r of rows) found.add(r.address);
      }
      return found;
    },

    /** The sub-domains of a root. */
    subDomainsOf: (db: Db, rootId: number) =>
      db.selectFrom('domains').select(['id', 'hostname']).where('parent_id', '=', rootId).execute(),

    /** Ids of the mailboxes on these domains. */
    async mailboxIdsOnDomains(db: Db, domainIds: number[]): Promise<number[]> {
      const ids: number[] = [];
      for (const part of chunks(domainIds)) {
        const rows = await db.selectFrom('mailboxes').select('id').where('domain_id', 'in', part).execute();
        for (const r of rows) ids.push(r.id);
      }
      return ids;
    },

    /** Deletes the event log rows of mailboxes. */
    async deleteEventsOf(db: Db, mailboxIds: number[]): Promise<void> {
      for (const part of chunks(mailboxIds)) await db.deleteFrom('events').where('mailbox_id', 'in', part).execute();
    },

    /** Deletes mailboxes by id. */
    async deleteMailboxes(db: Db, mailboxIds: number[]): Promise<void> {
      for (const part of chunks(mailboxIds)) await db.deleteFrom('mailboxes').where('id', 'in', part).execute();
    },

    /** Deletes every alias (and catch-all) on these domains. */
    deleteAliasesOnDomains: (db: Db, domainIds: number[]) =>
      db.deleteFrom('aliases').where('domain_id', 'in', domainIds).execute(),

    /** Deletes domains with their DNS records; children must come before their parent in `domainIds`. */
    async deleteDomains(db: Db, domainIds: number[]): Promise<void> {
      await db.deleteFrom('dns_records').where('domain_id', 'in', domainIds).execute();
      for (const id of domainIds) await db.deleteFrom('domains').where('id', '=', id).execute();
    },

    /** Runs `fn` inside a savepoint: its changes are kept if it resolves and undone if it throws. */
    async inSavepoint<T>(db: Db, fn: () => Promise<T>): Promise<T> {
      await sql`SAVEPOINT mailstead_item`.execute(db);
      try {
        const out = await fn();
        await sql`RELEASE mailstead_item`.execute(db);
        return out;
      } catch (err) {
        await sql`ROLLBACK TO mailstead_item`.execute(db);
        await sql`RELEASE mailstead_item`.execute(db);
        throw err;
      }
    },

    /** Notes that a task's data holds plain passwords until redacted. */
    markForRedaction: (db: Db, taskId: number) =>
      db.insertInto('password_redactions').values({ task_id: taskId }).onConflict((oc) => oc.doNothing()).execute(),

    /** Tasks holding plain passwords that finished at or before `cutoff`. */
    dueForRedaction: (db: Db, cutoff: number, limit: number) =>
      db.selectFrom('password_redactions').innerJoin('tasks', 'tasks.id', 'password_redactions.task_id')
        .select(['tasks.id', 'tasks.payload', 'tasks.result'])
        .where('tasks.status', 'in', ['completed', 'failed']).where('tasks.finished_at', '<=', cutoff)
        .orderBy('tasks.id').limit(limit).execute(),

    /** Stores the redacted data of a task and forgets it. */
    async saveRedacted(db: Db, taskId: number, payload: string, result: string | null): Promise<void> {
      await db.updateTable('tasks').set({ payload, result }).where('id', '=', taskId).execute();
      await db.deleteFrom('password_redactions').where('task_id', '=', taskId).execute();
    },
  };
}
export type MailboxStore = ReturnType<typeof createMailboxStore>;
