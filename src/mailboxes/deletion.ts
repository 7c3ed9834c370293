import type { Db, Trx } from '../db/connection.js';
import { serializedTransaction } from '../db/provisioning-lock.js';
import { domainOf, normalizeAddress } from '../message/address.js';
import { normalizeHostname } from '../message/hostname.js';
import type { DomainStore } from '../domains/store.js';
import { ApiError, unprocessable } from '../errors.js';
import type { Logger } from '../logger.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { TaskHandler } from '../tasks/types.js';
import type { ApiKey, TenantService } from '../tenants/service.js';
import type { DeletionHooks } from './hooks.js';
import type { MailboxStore } from './store.js';

/** One item's outcome in a bulk delete result. */
export interface DeleteOutcome { status: 'deleted' | 'failed' | 'skipped'; reason?: string }

/** Cooldown scope of the mailbox bulk delete (per key and client IP). */
export const DELETE_MAILBOX_COOLDOWN = 'delete-mailbox';
/** Cooldown scope of the domain bulk delete (per key and client IP; its own counter). */
export const DELETE_DOMAIN_COOLDOWN = 'delete-domain';

/** Normalises a list and refuses duplicates (which may differ only in case). */
function distinct(field: string, values: string[], normalize: (v: string) => string): string[] {
  const out = values.map(normalize);
  if (new Set(out).size !== out.length) throw unprocessable(`${field} must not contain duplicates`);
  return out;
}

/** The rules of the bulk deletes before enqueue: validation, then the cooldown, then the task. */
export function createDeletionService({ db, queue, tenants }: { db: Db; queue: TaskQueue; tenants: TenantService }) {
  async function enqueue(key: ApiKey, ip: string, scope: string, kind: string, domain: string, payload: object) {
    return serializedTransaction(db, async (trx) => {
      await tenants.checkCooldown(trx, scope, key.id, ip);
      await tenants.markCooldown(trx, scope, key.id, ip);
      return queue.enqueue(trx, { kind, tenantId: key.tenantId, keyId: key.id, domain, payload });
    });
  }
  return {
    /** Enqueues the deletion of mailboxes (addresses validated by the schema). */
    deleteMailboxes(key: ApiKey, ip: string, list: string[]) {
      const addresses = distinct('Mailboxes', list, normalizeAddress);
      return enqueue(key, ip, DELETE_MAILBOX_COOLDOWN, 'mailbox.delete', domainOf(addresses[0]), { addresses });
    },
    /** Enqueues the deletion of domains (hostnames validated by the schema). */
    deleteDomains(key: ApiKey, ip: string, list: string[]) {
      const hostnames = distinct('Domains', list, normalizeHostname);
      return enqueue(key, ip, DELETE_DOMAIN_COOLDOWN, 'domain.delete', hostnames[0], { hostnames });
    },
  };
}
export type DeletionService = ReturnType<typeof createDeletionService>;

/**
 * The bulk delete tasks. Each item is removed inside its own savepoint of the task's transaction,
 * in dependency order (other capabilities' rows via the hooks, events, aliases, mailboxes, DNS
 * records, sub-domains, the domain), so an item either goes completely or not at all, and a crash
 * leaves nothing half-deleted. Items not in the task's tenant are skipped untouched.
 */
export function deletionTasks({ store, domainStore, hooks, logger }: { store: MailboxStore; domainStore: DomainStore; hooks: DeletionHooks; logger: Logger }): TaskHandler[] {
  async function removeMailboxes(trx: Trx, ids: number[]) {
    if (ids.length === 0) return;
    await hooks.mailboxesDeleted(trx, ids);
    await store.deleteEventsOf(trx, ids);
    await store.deleteMailboxes(trx, ids);
  }

  async function attempt(trx: Trx, what: string, fn: () => Promise<void>): Promise<DeleteOutcome> {
    try {
      await store.inSavepoint(trx, fn);
      return { status: 'deleted' };
    } catch (err) {
      if (err instanceof ApiError) return { status: 'failed', reason: err.reason };
      logger.error({ err, item: what }, 'bulk delete item failed');
      return { status: 'failed', reason: 'Deletion failed: internal error' };
    }
  }

  const mailboxDelete: TaskHandler<{ addresses: string[] }> = {
    kind: 'mailbox.delete',
    async run(trx, task) {
      const results: Record<string, DeleteOutcome> = {};
      for (const address of task.payload.addresses) {
        const mailbox = task.tenantId === null ? undefined : await store.ownedByAddress(trx, task.tenantId, address);
        results[address] = mailbox
          ? await attempt(trx, address, () => removeMailboxes(trx, [mailbox.id]))
          : { status: 'skipped', reason: 'not found' };
      }
      return { totalEmail: task.payload.addresses.length, results };
    },
  };

  const domainDelete: TaskHandler<{ hostnames: string[] }> = {
    kind: 'domain.delete',
    async run(trx, task) {
      const results: Record<string, DeleteOutcome> = {};
      const gone = new Set<string>();
      for (const host of task.payload.hostnames) {
        if (gone.has(host)) { results[host] = { status: 'skipped', reason: 'deleted with its parent' }; continue; }
        const domain = task.tenantId === null ? undefined : await domainStore.ownedByHostname(trx, task.tenantId, host);
        if (!domain) { results[host] = { status: 'skipped', reason: 'not found' }; continue; }
        const subs = domain.domain_type === 'root' ? await store.subDomainsOf(trx, domain.id) : [];
        const ids = [...subs.map((s) => s.id), domain.id]; // children before their parent
        results[host] = await attempt(trx, host, async () => {
          await removeMailboxes(trx, await store.mailboxIdsOnDomains(trx, ids));
          await store.deleteAliasesOnDomains(trx, ids);
          await hooks.domainsDeleted(trx, ids);
          await store.deleteDomains(trx, ids);
        });
        if (results[host].status === 'deleted') for (const h of [host, ...subs.map((s) => s.hostname)]) gone.add(h);
      }
      return { totalEmail: task.payload.hostnames.length, results };
    },
  };

  return [mailboxDelete, domainDelete];
}
