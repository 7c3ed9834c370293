import type { Db } from '../db/connection.js';
import { serializedTransaction } from '../db/provisioning-lock.js';
import type { Clock } from '../clock.js';
import { conflict, notFound, unprocessable } from '../errors.js';
import { ddmmyyyy } from '../format.js';
import { newVerificationToken } from './records.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { ApiKey, TenantService } from '../tenants/service.js';
import { normalizeHostname } from '../message/hostname.js';
import type { DomainStore } from './store.js';

/** The default and largest mailbox-slot count of a hostname. */
export const MAX_MAILBOX_SLOTS = 100;

/** A sub-domain cooldown counter: its scope (the counter's name) and its length. */
export interface SubDomainCooldown { scope: string; seconds?: number }
/** Variant A's sub-domain cooldown: the common length (MAILSTEAD_COOLDOWN_SECONDS). */
export const SUB_DOMAIN_COOLDOWN: SubDomainCooldown = { scope: 'sub-domain' };

/** The rules of root domains and sub-domains. */
export function createDomainService(deps: {
  db: Db; store: DomainStore; queue: TaskQueue; tenants: TenantService; clock: Clock;
}) {
  const { db, store, queue, tenants, clock } = deps;

  /** Refuses hostnames that anyone registered, and names under another tenant's domain. */
  async function assertFree(trx: Db, tenantId: number, hostnames: string[]): Promise<void> {
    const ancestors = new Set<string>();
    for (const h of hostnames) {
      const labels = h.split('.');
      for (let i = 1; i < labels.length - 1; i++) ancestors.add(labels.slice(i).join('.'));
    }
    const taken = await store.takenAmong(trx, [...new Set([...hostnames, ...ancestors])]);
    const exact = taken.find((t) => hostnames.includes(t.hostname));
    if (exact) throw conflict(`Domain ${exact.hostname} is already registered`);
    const foreignParent = taken.find((t) => t.tenant_id !== tenantId);
    if (foreignParent) throw conflict(`Domain ${foreignParent.hostname} is registered by another account`);
  }

  return {
    /** Registers a root hostname and enqueues its provisioning task, in one transaction. */
    async createRoot(key: ApiKey, hostname: string, slots = MAX_MAILBOX_SLOTS) {
      const host = normalizeHostname(hostname);
      return serializedTransaction(db, async (trx) => {
        await assertFree(trx, key.tenantId, [host]);
        const domainId = await store.insert(trx, {
          tenant_id: key.tenantId, hostname: host, parent_id: null, domain_type: 'root',
          total_mailbox_allowed: slots, verification_token: newVerificationToken(), created_at: clock.now(),
        });
        const taskId = await queue.enqueue(trx, { kind: 'domain.create', tenantId: key.tenantId, keyId: key.id, domain: host, payload: { domainIds: [domainId] } });
        return { taskId, domain: host };
      });
    },

    /**
     * Registers sub-domains of an owned root and enqueues one task for all of them. `cooldown` names
     * the counter that limits requests per key and parent (the legacy variant keeps its own).
     */
    async createSubs(key: ApiKey, parentHost: string, labels: string[], slots = MAX_MAILBOX_SLOTS, cooldown = SUB_DOMAIN_COOLDOWN) {
      const parentName = normalizeHostname(parentHost);
      const hosts = labels.map((l) => `${l.toLowerCase()}.${parentName}`);
      if (new Set(hosts).size !== hosts.length) throw unprocessable('Params.sub_domains must not contain duplicates');
      const tooLong = hosts.find((h) => h.length > 253);
      if (tooLong) throw unprocessable(`Params.sub_domains makes ${tooLong.slice(0, 40)}… longer than 253 characters`);
      return serializedTransaction(db, async (trx) => {
        const parent = await store.ownedByHostname(trx, key.tenantId, parentName);
        if (!parent || parent.domain_type !== 'root') throw notFound('Parent domain not found');
        await tenants.checkCooldown(trx, cooldown.scope, key.id, parentName, cooldown.seconds);
        await assertFree(trx, key.tenantId, hosts);
        const domainIds: number[] = [];
        for (const hostname of hosts) {
          domainIds.push(await store.insert(trx, {
            tenant_id: key.tenantId, hostname, parent_id: parent.id, domain_type: 'sub',
            total_mailbox_allowed: slots, verification_token: newVerificationToken(), created_at: clock.now(),
          }));
        }
        await tenants.markCooldown(trx, cooldown.scope, key.id, parentName);
        const taskId = await queue.enqueue(trx, { kind: 'subdomain.create', tenantId: key.tenantId, keyId: key.id, domain: parentName, payload: { domainIds } });
        return { taskId, domain: parentName };
      });
    },

    /** The tenant's domains keyed by hostname, as GET /v1/list/domain shows them. */
    async list(key: ApiKey) {
      const rows = await store.listForTenant(db, key.tenantId);
      const results: Record<string, { status: string; domain_type: string; domain_quota: string; mailbox_count: string; created_at: string }> = {};
      for (const r of rows) {
        results[r.hostname] = {
          status: r.status,
          domain_type: r.domain_type,
          domain_quota: `${r.quota_gb}GB`,
          mailbox_count: String(r.mailbox_count ?? 0),
          created_at: ddmmyyyy(r.created_at),
        };
      }
      return { total_domain: rows.length, results };
    },

    /** One of the tenant's hostnames with its status and records as the last check left them (404 for any other). */
    async get(key: ApiKey, hostname: string) {
      const host = normalizeHostname(hostname);
      const d = await store.ownedByHostname(db, key.tenantId, host);
      if (!d) throw notFound('Domain not found');
      return { domain: d.hostname, status: d.status, records: await store.records(db, d.id) };
    },

    /** A hostname's current status and DNS records, or null if it no longer exists. */
    async current(hostname: string) {
      const d = await store.byHostname(db, hostname);
      if (!d) return null;
      return { status: d.status, records: await store.records(db, d.id) };
    },
  };
}
export type DomainService = ReturnType<typeof createDomainService>;
