import type { Clock } from '../clock.js';
import type { Db, Trx } from '../db/connection.js';
import { unprocessable } from '../errors.js';
import { sqlDateTime } from '../format.js';
import type { TaskHandler } from '../tasks/types.js';
import type { TenantService } from '../tenants/service.js';
import { generatePassword, hashPassword } from './passwords.js';
import { BULK_COOLDOWN, slotsRefusal, type BulkPayload, type SinglePayload } from './service.js';
import type { MailboxStore } from './store.js';

/** A password in clear (for the task result) and its hash (for the row). */
interface Credential { password: string; hash: string }

/** The domain a create task is for, still owned by the task's tenant; fails the task otherwise. */
async function targetDomain(trx: Trx, store: MailboxStore, domainId: number, tenantId: number | null) {
  const domain = await store.domainById(trx, domainId);
  if (!domain || domain.tenant_id !== tenantId) throw unprocessable('Domain no longer exists');
  return domain;
}

/** The task kinds that create mailboxes. Hashing happens in `prepare`, outside the write transaction. */
export function mailboxCreateTasks({ db, store, tenants, clock }: { db: Db; store: MailboxStore; tenants: TenantService; clock: Clock }): TaskHandler[] {
  const single: TaskHandler<SinglePayload, Credential> = {
    kind: 'mailbox.single',
    async prepare(task) {
      const generated = task.payload.password === 0;
      const password = generated ? generatePassword() : task.payload.password as string;
      return { password, hash: await hashPassword(password, { generated }) };
    },
    async run(trx, task, cred) {
      const { address, domainId, displayName, quotaMb = 0 } = task.payload;
      const domain = await targetDomain(trx, store, domainId, task.tenantId);
      if ((await store.takenAmong(trx, [address])).size > 0) throw unprocessable(`Mailbox ${address} already exists`);
      const left = domain.total_mailbox_allowed - (await store.countForDomain(trx, domainId));
      if (left < 1) throw slotsRefusal(domain.hostname, domain.total_mailbox_allowed, left, 1);
      const now = clock.now();
      await store.insert(trx, [{ tenant_id: domain.tenant_id, domain_id: domainId, address, display_name: displayName, password_hash: cred.hash, quota_mb: quotaMb, created_at: now }]);
      return {
        totalEmail: 1,
        results: {
          [address]: { email: address, password: cred.password, quota: `${quotaMb}MB`, domain: domain.hostname, provisioning: 'pending', create_date: sqlDateTime(now) },
        },
      };
    },
  };

  const bulk: TaskHandler<BulkPayload, Map<string, Credential>> = {
    kind: 'mailbox.bulk',
    // Checks what it can before hashing, so that a run that cannot succeed gives its cooldown back
    // (the run itself cannot: its transaction rolls back with the failure).
    async prepare(task) {
      const { addresses, domainId, password } = task.payload;
      const giveBack = async (err: Error): Promise<never> => {
        if (task.keyId !== null && task.payload.cooldown !== false) await tenants.clearCooldown(db, BULK_COOLDOWN, task.keyId, task.domain);
        throw err;
      };
      const domain = await store.domainById(db, domainId);
      if (!domain || domain.tenant_id !== task.tenantId) return giveBack(unprocessable('Domain no longer exists'));
      const taken = await store.takenAmong(db, addresses);
      const fresh = addresses.filter((a) => !taken.has(a));
      const left = domain.total_mailbox_allowed - (await store.countForDomain(db, domainId));
      if (fresh.length > left) return giveBack(slotsRefusal(domain.hostname, domain.total_mailbox_allowed, left, fresh.length));
      if (password === 0) {
        return new Map(await Promise.all(fresh.map(async (a) => {
          const p = generatePassword();
          return [a, { password: p, hash: await hashPassword(p, { generated: true }) }] as const;
        })));
      }
      // A shared password is hashed once: one salt for the batch costs nothing, as the password is the same.
      const hash = fresh.length > 0 ? await hashPassword(password) : '';
      return new Map(fresh.map((a) => [a, { password, hash }]));
    },
    async run(trx, task, creds) {
      const { addresses, domainId, displayName, quotaMb = 0 } = task.payload;
      const domain = await targetDomain(trx, store, domainId, task.tenantId);
      const taken = await store.takenAmong(trx, addresses);
      const create = addresses.filter((a) => !taken.has(a) && creds.has(a));
      const left = domain.total_mailbox_allowed - (await store.countForDomain(trx, domainId));
      if (create.length > left) throw slotsRefusal(domain.hostname, domain.total_mailbox_allowed, left, create.length);
      const now = clock.now();
      await store.insert(trx, create.map((address) => ({
        tenant_id: domain.tenant_id, domain_id: domainId, address, display_name: displayName, password_hash: creds.get(address)!.hash, quota_mb: quotaMb, created_at: now,
      })));
      const results: Record<string, { status: string; password: string }> = {};
      for (const a of create) results[a] = { status: 'Created successfully.', password: creds.get(a)!.password };
      return { totalEmail: create.length, results };
    },
  };
  return [single, bulk];
}
