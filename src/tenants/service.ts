import type { Db } from '../db/connection.js';
import { dialectOf } from '../db/dialect.js';
import { readerOf, type Reader } from '../db/reader.js';
import type { Clock } from '../clock.js';
import { tooManyRequests } from '../errors.js';
import { generateApiKey, hashApiKey, looksLikeApiKey, parsePermissions, sameHash, type Permission } from './keys.js';
import { KEY_BY_HASH_SQL, type KeyRow, type TenantStore } from './store.js';

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

/** Key rows kept on PostgreSQL at most (past it they are all dropped and read again). */
const MAX_KEPT_KEYS = 10_000;

/** Tenants, keys, plans and cooldowns: the rules, used by the HTTP layer and the CLI alike. */
export function createTenantService({ db, store, clock, cooldownSeconds, changes }: {
  db: Db; store: TenantStore; clock: Clock; cooldownSeconds: number;
  /** On PostgreSQL, the directory's change count (db/pg-directory.ts), which the key rows kept are keyed on. */
  changes?: () => number;
}) {
  let reader: Reader | null = null;
  const onPostgres = dialectOf(db) === 'postgres';
  /** Key rows read on PostgreSQL, by hash, with the change count they were read under. */
  const kept = new Map<string, { row: KeyRow; count: number }>();

  /**
   * The key row of `hash` on PostgreSQL: the one kept while the change count stands still, else
   * read (and kept). Only rows found are kept, so keys made up by a caller fill nothing.
   */
  async function pgKeyRow(hash: string): Promise<KeyRow | undefined> {
    const count = changes ? changes() : NaN;
    const known = kept.get(hash);
    if (known && known.count === count) return known.row;
    const row = await store.keyByHash(db, hash); // a pooled connection reads what any node committed
    if (row && changes) {
      if (kept.size >= MAX_KEPT_KEYS) kept.clear();
      kept.set(hash, { row, count });
    }
    return row;
  }

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
     * every request, so the key row is read by one prepared statement on the read connection
     * (src/db/reader.ts), without Kysely. On SQLite nothing is cached: every request reads the row
     * as committed at that moment, so a revocation or plan change by anyone (the CLI included)
     * applies to the very next request. (A cache would have to ask SQLite whether anything
     * changed, `PRAGMA data_version`, which is one statement just like the lookup it would save.)
     * On PostgreSQL the lookup is a round trip to the server, half of a read's, so the row is kept
     * while the directory's change count stands still: a revocation or plan change made through
     * this node applies to its next request, one made on another node or by the CLI once that
     * commit's NOTIFY arrives (milliseconds), as a request that came in just before it would.
     */
    async authenticate(presented: string): Promise<ApiKey | null> {
      if (!looksLikeApiKey(presented)) return null;
      const hash = hashApiKey(presented);
      let row: KeyRow | undefined;
      if (onPostgres) {
        row = await pgKeyRow(hash);
      } else {
        reader ??= await readerOf(db);
        row = reader.prepare(KEY_BY_HASH_SQL).get(hash) as KeyRow | undefined;
      }
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
