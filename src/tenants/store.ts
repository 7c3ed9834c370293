import type { Db } from '../db/connection.js';

/** A key with its tenant's plan and admin flags, as `KEY_BY_HASH_SQL` reads it. */
export interface KeyRow {
  id: number;
  tenant_id: number;
  key_hash: string;
  perms: string;
  revoked_at: number | null;
  plan_active: number;
  is_admin: number;
}

/**
 * The key with its tenant's plan and admin flags, by hash; revoked keys included (the caller
 * decides). Plain SQL for a prepared statement on the read connection: it runs on every request.
 */
export const KEY_BY_HASH_SQL = 'select "api_keys"."id", "api_keys"."tenant_id", "api_keys"."key_hash", "api_keys"."perms", "api_keys"."revoked_at", '
  + '"tenants"."plan_active", "tenants"."is_admin" from "api_keys" inner join "tenants" on "tenants"."id" = "api_keys"."tenant_id" '
  + 'where "api_keys"."key_hash" = ?';

/** Every query about tenants, keys and cooldown counters. */
export function createTenantStore() {
  return {
    insertTenant: (db: Db, t: { name: string; plan_active: number; is_admin: number; created_at: number }) =>
      db.insertInto('tenants').values(t).returning('id').executeTakeFirstOrThrow().then((r) => r.id),
    /** KEY_BY_HASH_SQL through Kysely, for PostgreSQL (which has no read connection beside the pool). */
    keyByHash: (db: Db, keyHash: string) =>
      db.selectFrom('api_keys').innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
        .select(['api_keys.id', 'api_keys.tenant_id', 'api_keys.key_hash', 'api_keys.perms', 'api_keys.revoked_at', 'tenants.plan_active', 'tenants.is_admin'])
        .where('api_keys.key_hash', '=', keyHash).executeTakeFirst() as Promise<KeyRow | undefined>,
    tenantByName: (db: Db, name: string) =>
      db.selectFrom('tenants').selectAll().where('name', '=', name).executeTakeFirst(),
    setPlan: (db: Db, name: string, active: boolean) =>
      db.updateTable('tenants').set({ plan_active: active ? 1 : 0 }).where('name', '=', name).executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows)),
    insertKey: (db: Db, k: { tenant_id: number; key_hash: string; perms: string; created_at: number }) =>
      db.insertInto('api_keys').values(k).returning('id').executeTakeFirstOrThrow().then((r) => r.id),
    revokeKey: (db: Db, keyHash: string, at: number) =>
      db.updateTable('api_keys').set({ revoked_at: at }).where('key_hash', '=', keyHash).where('revoked_at', 'is', null)
        .executeTakeFirst().then((r) => Number(r.numUpdatedRows)),
    cooldownLast: (db: Db, scope: string, keyId: number, subject: string) =>
      db.selectFrom('cooldowns').select('last_at').where('scope', '=', scope).where('key_id', '=', keyId)
        .where('subject', '=', subject).executeTakeFirst().then((r) => r?.last_at ?? null),
    cooldownMark: (db: Db, scope: string, keyId: number, subject: string, at: number) =>
      db.insertInto('cooldowns').values({ scope, key_id: keyId, subject, last_at: at })
        .onConflict((oc) => oc.columns(['scope', 'key_id', 'subject']).doUpdateSet({ last_at: at })).execute(),
    cooldownClear: (db: Db, scope: string, keyId: number, subject: string) =>
      db.deleteFrom('cooldowns').where('scope', '=', scope).where('key_id', '=', keyId).where('subject', '=', subject).execute(),
  };
}
export type TenantStore = ReturnType<typeof createTenantStore>;
