import type { Config } from '../config.js';
import { generateDkimKeyPair, type DkimKeyPair } from '../signing/dkim-keys.js';
import { planRecords } from './records.js';
import type { Db, Trx } from '../db/connection.js';
import type { TaskHandler } from '../tasks/types.js';
import type { DomainStore } from './store.js';

interface Payload { domainIds: number[] }

/** Provisions each hostname: its DKIM key pair and DNS record set. Reruns keep what exists. */
async function provision(trx: Trx, store: DomainStore, config: Config, domainIds: number[], keys: DkimKeyPair[]) {
  const out: Array<{ hostname: string; status: string; records: Awaited<ReturnType<DomainStore['records']>> }> = [];
  for (const [i, id] of domainIds.entries()) {
    const d = await store.byId(trx, id);
    if (!d) continue; // deleted before the task ran
    await store.setDkimOnce(trx, id, keys[i].privateKeyPem, keys[i].publicKeyBase64);
    const publicKey = (await store.byId(trx, id))!.dkim_public_key!;
    await store.insertRecords(trx, id, planRecords(d.hostname, config.mxHosts, d.verification_token, publicKey, config.hostname));
    out.push({ hostname: d.hostname, status: d.status, records: await store.records(trx, id) });
  }
  return out;
}

/**
 * Adds to a provisioned hostname the planned records it lacks (a hostname provisioned before the
 * plan grew); records are kept by position, so existing ones stay as they are.
 */
export async function addMissingRecords(db: Db, store: DomainStore, config: Config, domainId: number): Promise<void> {
  const d = await store.byId(db, domainId);
  if (!d?.dkim_public_key) return; // not provisioned yet: its task writes the whole plan
  await store.insertRecords(db, domainId, planRecords(d.hostname, config.mxHosts, d.verification_token, d.dkim_public_key, config.hostname));
}

/** The task kinds of the domains capability. */
export function domainTasks({ store, config }: { store: DomainStore; config: Config }): TaskHandler<Payload, DkimKeyPair[]>[] {
  const prepare = (task: { payload: Payload }) => Promise.all(task.payload.domainIds.map(() => generateDkimKeyPair()));
  return [
    {
      kind: 'domain.create',
      prepare,
      async run(trx, task, keys) {
        const [d] = await provision(trx, store, config, task.payload.domainIds, keys);
        return { totalEmail: 0, results: d ? { domain: d.hostname, status: d.status, records: d.records } : { domain: task.domain, status: 'deleted', records: [] } };
      },
    },
    {
      kind: 'subdomain.create',
      prepare,
      async run(trx, task, keys) {
        const hosts = await provision(trx, store, config, task.payload.domainIds, keys);
        const results: Record<string, { status: string; records: unknown[] }> = {};
        for (const h of hosts) results[h.hostname] = { status: h.status, records: h.records };
        return { totalEmail: 0, results: { domain: task.domain, results } };
      },
    },
  ];
}
