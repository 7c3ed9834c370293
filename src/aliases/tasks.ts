import type { Clock } from '../clock.js';
import type { Trx } from '../db/connection.js';
import { unprocessable } from '../errors.js';
import type { TaskHandler } from '../tasks/types.js';
import { checkNewAliases, checkNoLoop } from './rules.js';
import type { CreatePayload, EditPayload } from './service.js';
import type { AliasStore } from './store.js';

/** One alias's outcome in a bulk delete result (kept on the task; alias polls show only `[]`). */
interface DeleteOutcome { status: 'deleted' | 'skipped'; reason?: string }

const tenantOf = (task: { tenantId: number | null }) => {
  if (task.tenantId === null) throw unprocessable('Task has no tenant');
  return task.tenantId;
};

/** The alias task kinds: each checks its rules again, since the state may have moved since enqueue. */
export function aliasTasks({ store, clock }: { store: AliasStore; clock: Clock }): TaskHandler[] {
  async function create(trx: Trx, task: { tenantId: number | null; payload: CreatePayload }) {
    const tenantId = tenantOf(task);
    const { domainId, aliases, catchAll, senderAllowed } = task.payload;
    const domain = await store.ownedDomainById(trx, tenantId, domainId);
    if (!domain) throw unprocessable('Domain no longer exists');
    await checkNewAliases(trx, store, tenantId, domain, aliases, () => 'Alias', 'goto');
    const now = clock.now();
    await store.insert(trx, aliases.map((a) => ({
      tenant_id: tenantId, domain_id: domainId, address: a.address, goto: JSON.stringify(a.goto),
      is_catch_all: catchAll ? 1 : 0, sender_allowed: senderAllowed ? 1 : 0, created_at: now, updated_at: now,
    })));
    return { totalEmail: aliases.length, results: [] };
  }

  return [
    {
      kind: 'alias.create',
      run: (trx, task: { tenantId: number | null; payload: CreatePayload }) => create(trx, task),
    },
    {
      kind: 'alias.bulk',
      run: (trx, task: { tenantId: number | null; payload: CreatePayload }) => create(trx, task),
    },
    {
      kind: 'alias.edit',
      async run(trx, task: { tenantId: number | null; payload: EditPayload }) {
        const tenantId = tenantOf(task);
        const { address, goto, active, senderAllowed } = task.payload;
        const alias = await store.ownedByAddress(trx, tenantId, address);
        if (!alias) throw unprocessable(`Alias ${address} not found`);
        if (goto) await checkNoLoop(trx, store, tenantId, new Map([[address, goto]]), 'goto');
        await store.update(trx, alias.id, {
          ...(goto ? { goto: JSON.stringify(goto) } : {}),
          ...(active === undefined ? {} : { active: active ? 1 : 0 }),
          ...(senderAllowed === undefined ? {} : { sender_allowed: senderAllowed ? 1 : 0 }),
          updated_at: clock.now(),
        });
        return { totalEmail: 1, results: [] };
      },
    },
    {
      kind: 'alias.delete',
      async run(trx, task: { tenantId: number | null; payload: { addresses: string[] } }) {
        const tenantId = tenantOf(task);
        const results: Record<string, DeleteOutcome> = {};
        for (const address of task.payload.addresses) {
          const alias = await store.ownedByAddress(trx, tenantId, address);
          if (alias) await store.remove(trx, alias.id);
          results[address] = alias ? { status: 'deleted' } : { status: 'skipped', reason: 'not found' };
        }
        return { totalEmail: task.payload.addresses.length, results };
      },
    },
  ];
}
