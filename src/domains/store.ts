import type { Db } from '../db/connection.js';
import type { PlannedRecord } from './records.js';

/** Every query about domains and their DNS records. */
export function createDomainStore() {
  return {
    byHostname: (db: Db, hostname: string) =>
      db.selectFrom('domains').selectAll().where('hostname', '=', hostname).executeTakeFirst(),
    byId: (db: Db, id: number) =>
      db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst(),
    /** The tenant's domain with this hostname, or undefined. */
    ownedByHostname: (db: Db, tenantId: number, hostname: string) =>
      db.selectFrom('domains').selectAll().where('tenant_id', '=', tenantId).where('hostname', '=', hostname).executeTakeFirst(),
    /** Which of these hostnames are registered by anyone. */
    takenAmong: (db: Db, hostnames: string[]) =>
      hostnames.length === 0 ? Promise.resolve([] as { hostname: string; tenant_id: number }[])
        : db.selectFrom('domains').select(['hostname', 'tenant_id']).where('hostname', 'in', hostnames).execute(),
    insert: (db: Db, d: { tenant_id: number; hostname: string; parent_id: number | null; domain_type: 'root' | 'sub'; total_mailbox_allowed: number; verification_token: string; created_at: number }) =>
      db.insertInto('domains').values(d).returning('id').executeTakeFirstOrThrow().then((r) => r.id),
    listForTenant: (db: Db, tenantId: number) =>
      db.selectFrom('domains').select(['id', 'hostname', 'status', 'domain_type', 'quota_gb', 'created_at'])
        .select((eb) => eb.selectFrom('mailboxes').select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('mailboxes.domain_id', '=', 'domains.id').as('mailbox_count'))
        .where('tenant_id', '=', tenantId).orderBy('hostname').execute(),
    records: (db: Db, domainId: number) =>
      db.selectFrom('dns_records').select(['type', 'name', 'value', 'priority', 'status'])
        .where('domain_id', '=', domainId).orderBy('position').execute(),
    /** Stores the DKIM key pair unless one is already there (a rerun keeps the first). */
    setDkimOnce: (db: Db, domainId: number, privateKeyPem: string, publicKeyBase64: string) =>
      db.updateTable('domains').set({ dkim_private_key: privateKeyPem, dkim_public_key: publicKeyBase64 })
        .where('id', '=', domainId).where('dkim_private_key', 'is', null).execute(),
    insertRecords: (db: Db, domainId: number, records: PlannedRecord[]) =>
      db.insertInto('dns_records').values(records.map((r, position) => ({ domain_id: domainId, position, ...r })))
        .onConflict((oc) => oc.columns(['domain_id', 'position']).doNothing()).execute(),
  };
}
export type DomainStore = ReturnType<typeof createDomainStore>;
