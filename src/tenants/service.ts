import { backendOf, type Backend } from '../db/backend.js';
import type { Db } from '../db/connection.js';
import type { Clock } from '../clock.js';
import { tooManyRequests } from '../errors.js';
import { generateApiKey, hashApiKey, looksLikeApiKey, parsePermissions, sameHash, type Permission } from './keys.js';
import type { KeyLookup } from './ports.js';
import { createPostgresKeyLookup } from './postgres/key-lookup.js';
import { createSqliteKeyLookup } from './sqlite/key-lookup.js';
import type { KeyRow, TenantStore } from './store.js';

/** The authenticated caller of a request: the key and what its tenant may do. */
export interface ApiKey {
  id: number;
  tenantId: number;
  perms: ReadonlySet<Permission>;
  planActive: boolean;
  isAdmin: boolean;
}

function apiKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    perms: new Set(row.perms.split(',') as Permission[]),
    planActive: row.plan_active === 1,
    isAdmin: row.is_admin === 1,
  };
}

/** Tenants, keys, plans and cooldowns: the rules, used by the HTTP layer and the CLI alike. */
export function createTenantService({ db, backend = backendOf(db), store, clock, cooldownSeconds, directoryVersion }: {
  db: Db; backend?: Backend; store: TenantStore; clock: Clock; cooldownSeconds: number;
  /** On PostgreSQL, the directory's version (core.ts), which the key rows kept are keyed on. */
  directoryVersion?: () => number;
}) {
  const keys: KeyLookup = backend.choose({ sqlite: createSqliteKeyLookup, postgres: createPostgresKeyLookup })({ db, store, directoryVersion });

  return {
    /** Creates a tenant and returns its id; throws if the name is taken. */
    async createTenant(name: string, opts: { plan?: boolean; admin?: boolean } = {}): Promise<number> {
      if (await store.tenantByName(db, name)) throw new Error(`tenant "${name}" already exists`);
      return store.insertTenant(db, { name, plan_active: opts.plan ? 1 : 0, is_admin: opts.admin ? 1 : 0, created_at: clock.now() });
    },

    /** Issues a new key for a tenant and returns it in clear, the only time it is ever seen. */
    async createKey(tenantName: string, permList: string): Promise<string> {
      const perms = parsePermissions(permList);
      if (perms.length === 0) throw new Error('at least one permission is needed');
      const tenant = await store.tenantByName(db, tenantName);
      if (!tenant) throw new Error(`tenant "${tenantName}" not found`);
      const key = generateApiKey();
      await store.insertKey(db, { tenant_id: tenant.id, key_hash: hashApiKey(key), perms: perms.join(','), created_at: clock.now() });
      return key;
    },

    /** Turns a tenant's plan on or off; throws for an unknown tenant. */
    async setPlan(tenantName: string, active: boolean): Promise<void> {
      if ((await store.setPlan(db, tenantName, active)) === 0) throw new Error(`tenant "${tenantName}" not found`);
    },

    /** Revokes a key at once; throws if no live key matches. */
    async revokeKey(key: string): Promise<void> {
      if (!looksLikeApiKey(key) || (await store.revokeKey(db, hashApiKey(key), clock.now())) === 0) {
        throw new Error('no active key matches');
      }
    },

    /**
     * The caller for a presented key, or null when it is malformed, unknown or revoked. It runs on
     * every request: how the key row is found, and for how long a row read stands, is the
     * backend's (ports.ts `KeyLookup`, sqlite/ and postgres/key-lookup.ts).
     */
    async authenticate(presented: string): Promise<ApiKey | null> {
      if (!looksLikeApiKey(presented)) return null;
      const hash = hashApiKey(presented);
      const row = await keys.keyRow(hash);
      if (!row || row.revoked_at !== null || !sameHash(row.key_hash, hash)) return null;
      return apiKey(row);
    },

    /**
     * Refuses with 429 while a cooldown of `scope` for this key and subject runs. Call inside the
     * transaction that also enqueues, then `markCooldown` there, so only successes count. `seconds`
     * is the cooldown's length when it is not the common one (the legacy variant's hourly counter).
     */
    async checkCooldown(trx: Db, scope: string, keyId: number, subject: string, seconds = cooldownSeconds): Promise<void> {
      const last = await store.cooldownLast(trx, scope, keyId, subject);
      if (last === null) return;
      const left = last + seconds * 1000 - clock.now();
      if (left > 0) throw tooManyRequests(`Cooldown in force: try again in ${Math.ceil(left / 1000)} seconds`, left / 1000);
    },

    /** Records a success that starts the cooldown of `scope` for this key and subject. */
    markCooldown: (trx: Db, scope: string, keyId: number, subject: string) =>
      store.cooldownMark(trx, scope, keyId, subject, clock.now()),

    /** Forgets a cooldown (for a run that turned out not to succeed). */
    clearCooldown: (trx: Db, scope: string, keyId: number, subject: string) =>
      store.cooldownClear(trx, scope, keyId, subject),
  };
}
export type TenantService = ReturnType<typeof createTenantService>;
