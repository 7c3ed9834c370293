import type { Trx } from '../db/connection.js';

/** Cleans up another capability's rows for mailboxes about to be deleted, inside the delete transaction. */
export type MailboxesDeletedHook = (trx: Trx, mailboxIds: number[]) => Promise<void>;
/** Cleans up another capability's rows for domains about to be deleted, inside the delete transaction. */
export type DomainsDeletedHook = (trx: Trx, domainIds: number[]) => Promise<void>;

/**
 * The deletion hooks other capabilities register (stored mail, webhook deliveries, DNS state), so
 * that deleting mailboxes or domains removes what hangs off them in the same transaction, before
 * the rows they reference go.
 */
export function createDeletionHooks() {
  const mailboxHooks: MailboxesDeletedHook[] = [];
  const domainHooks: DomainsDeletedHook[] = [];
  return {
    /** Registers cleanup run before mailbox rows are deleted (their ids are still valid). */
    onMailboxesDeleted(fn: MailboxesDeletedHook) { mailboxHooks.push(fn); },
    /** Registers cleanup run before domain rows are deleted (after their mailboxes are gone). */
    onDomainsDeleted(fn: DomainsDeletedHook) { domainHooks.push(fn); },
    /** Runs the mailbox hooks in registration order. */
    async mailboxesDeleted(trx: Trx, mailboxIds: number[]) {
      if (mailboxIds.length === 0) return;
      for (const fn of mailboxHooks) await fn(trx, mailboxIds);
    },
    /** Runs the domain hooks in registration order. */
    async domainsDeleted(trx: Trx, domainIds: number[]) {
      if (domainIds.length === 0) return;
      for (const fn of domainHooks) await fn(trx, domainIds);
    },
  };
}
export type DeletionHooks = ReturnType<typeof createDeletionHooks>;
