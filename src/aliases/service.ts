import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { serializedTransaction } from '../db/provisioning-lock.js';
import { addressProblem, domainOf, normalizeAddress } from '../message/address.js';
import { normalizeHostname } from '../message/hostname.js';
import { notFound, unprocessable } from '../errors.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { ApiKey, TenantService } from '../tenants/service.js';
import { catchAllKey, parseAliasAddress, parseGoto } from './goto.js';
import { checkNewAliases, checkNoLoop, type AliasSpec } from './rules.js';
import type { AliasStore } from './store.js';

/** Payload of alias.create and alias.bulk. */
export interface CreatePayload { domainId: number; aliases: AliasSpec[]; catchAll: boolean; senderAllowed: boolean }
/** Payload of alias.edit: only the fields to change. */
export interface EditPayload { address: string; goto?: string[]; active?: boolean; senderAllowed?: boolean }

/** Cooldown scope of the alias bulk delete (per key and client IP). */
export const DELETE_ALIAS_COOLDOWN = 'delete-alias';

/** The rules of aliases, forwarders and catch-alls before enqueue (DECISIONS.md section 6). */
export function createAliasService({ db, store, queue, tenants }: { db: Db; store: AliasStore; queue: TaskQueue; tenants: TenantService; clock: Clock }) {
  async function ownedDomain(trx: Db, key: ApiKey, hostname: string) {
    const domain = await store.ownedDomain(trx, key.tenantId, hostname);
    if (!domain) throw notFound('Domain not found');
    return domain;
  }

  function enqueueCreate(trx: Db, key: ApiKey, kind: string, domain: { id: number; hostname: string }, payload: CreatePayload) {
    return queue.enqueue(trx, { kind, tenantId: key.tenantId, keyId: key.id, domain: domain.hostname, payload });
  }

  return {
    /** Validates one alias, forwarder or catch-all and enqueues its creation. */
    async create(key: ApiKey, input: { domain: string; address?: string; goto: string | string[]; catchAll?: boolean; senderAllowed?: boolean }) {
      const host = normalizeHostname(input.domain);
      let address: string;
      if (input.catchAll) {
        if (input.address !== undefined && input.address.toLowerCase() !== catchAllKey(host)) {
          throw unprocessable(`Params.address must be omitted when Params.catch_all is true (the catch-all is ${catchAllKey(host)})`);
        }
        address = catchAllKey(host);
      } else {
        if (input.address === undefined) throw unprocessable('Params.address is required unless Params.catch_all is true');
        const problem = addressProblem(input.address);
        if (problem) throw unprocessable(`Params.address ${problem}`);
        address = normalizeAddress(input.address);
        if (domainOf(address) !== host) throw unprocessable(`Params.address must be an address on ${host}`);
      }
      const goto = parseGoto('Params.goto', input.goto);
      return serializedTransaction(db, async (trx) => {
        const domain = await ownedDomain(trx, key, host);
        await checkNewAliases(trx, store, key.tenantId, domain, [{ address, goto }], () => 'Params.address', 'Params.goto');
        return enqueueCreate(trx, key, 'alias.create', domain, { domainId: domain.id, aliases: [{ address, goto }], catchAll: !!input.catchAll, senderAllowed: !!input.senderAllowed });
      });
    },

    /** Validates a batch of aliases (all or nothing) and enqueues their creation. */
    async createBulk(key: ApiKey, input: { domain: string; aliases: Array<{ address: string; goto: string | string[] }> }) {
      const host = normalizeHostname(input.domain);
      const seen = new Set<string>();
      const specs = input.aliases.map((a, i): AliasSpec => {
        const address = normalizeAddress(a.address);
        if (domainOf(address) !== host) throw unprocessable(`Params.aliases[${i}].address must be an address on ${host}`);
        if (seen.has(address)) throw unprocessable(`Params.aliases[${i}].address ${address} is listed twice`);
        seen.add(address);
        return { address, goto: parseGoto(`Params.aliases[${i}].goto`, a.goto) };
      });
      return serializedTransaction(db, async (trx) => {
        const domain = await ownedDomain(trx, key, host);
        await checkNewAliases(trx, store, key.tenantId, domain, specs, (i) => `Params.aliases[${i}].address`, 'Params.aliases');
        return enqueueCreate(trx, key, 'alias.bulk', domain, { domainId: domain.id, aliases: specs, catchAll: false, senderAllowed: false });
      });
    },

    /** Validates a change of an alias of the tenant and enqueues it; an unknown alias is 422 (SPEC.md). */
    async edit(key: ApiKey, input: { address: string; goto?: string | string[]; active?: boolean; senderAllowed?: boolean }) {
      const address = parseAliasAddress('address', input.address);
      if (input.goto === undefined && input.active === undefined && input.senderAllowed === undefined) {
        throw unprocessable('Request body needs at least one of goto, active and sender_allowed');
      }
      const goto = input.goto === undefined ? undefined : parseGoto('goto', input.goto);
      return serializedTransaction(db, async (trx) => {
        const alias = await store.ownedByAddress(trx, key.tenantId, address);
        if (!alias) throw unprocessable(`Alias ${address} not found`);
        if (goto) await checkNoLoop(trx, store, key.tenantId, new Map([[address, goto]]), 'goto');
        const payload: EditPayload = { address, goto, active: input.active, senderAllowed: input.senderAllowed };
        return queue.enqueue(trx, { kind: 'alias.edit', tenantId: key.tenantId, keyId: key.id, domain: alias.hostname, payload });
      });
    },

    /** Validates alias addresses, applies the cooldown per key and client IP, and enqueues their deletion. */
    async deleteBulk(key: ApiKey, ip: string, list: string[]) {
      const addresses = list.map((a, i) => parseAliasAddress(`Aliases[${i}]`, a));
      if (new Set(addresses).size !== addresses.length) throw unprocessable('Aliases must not contain duplicates');
      return serializedTransaction(db, async (trx) => {
        await tenants.checkCooldown(trx, DELETE_ALIAS_COOLDOWN, key.id, ip);
        await tenants.markCooldown(trx, DELETE_ALIAS_COOLDOWN, key.id, ip);
        const first = addresses[0];
        const domain = first.startsWith('@') ? first.slice(1) : domainOf(first);
        return queue.enqueue(trx, { kind: 'alias.delete', tenantId: key.tenantId, keyId: key.id, domain, payload: { addresses } });
      });
    },

    /** The aliases of an owned domain keyed by address, as GET /v1/list/alias shows them. */
    async list(key: ApiKey, hostname: string) {
      const host = normalizeHostname(hostname);
      const domain = await ownedDomain(db, key, host);
      const results: Record<string, { goto: string[]; active: boolean; is_catch_all: boolean; provisioning_status: string }> = {};
      for (const a of await store.listForDomain(db, domain.id)) {
        results[a.address] = { goto: JSON.parse(a.goto) as string[], active: a.active === 1, is_catch_all: a.is_catch_all === 1, provisioning_status: a.status };
      }
      return { domain: host, results };
    },
  };
}
export type AliasService = ReturnType<typeof createAliasService>;
