import { sql } from 'kysely';
import { backendOf, type Backend } from '../db/backend.js';
import type { Db } from '../db/connection.js';
import type { RecipientSnapshot, SnapshotQuery } from './ports.js';
import { postgresSnapshotQuery } from './postgres/snapshot-query.js';
import { sqliteSnapshotQuery } from './sqlite/snapshot-query.js';

/**
 * Reads, in one statement, every row a resolution of `address` may need: the addresses reachable
 * through active aliases and catch-alls (a recursive walk; UNION drops repeats, so loops end), their
 * mailboxes and aliases, and the domains they are on. `query` is the backend's form of that
 * statement (ports.ts), chosen once by the caller; by default that of `db`'s backend.
 */
export async function readRecipientSnapshot(db: Db, address: string, query: SnapshotQuery = snapshotQueryOf(backendOf(db))): Promise<RecipientSnapshot> {
  const { rows } = await query(address).execute(db);
  const snapshot = { domains: new Map(), mailboxes: new Map(), aliases: new Map() } satisfies RecipientSnapshot;
  for (const r of rows) {
    if (r.kind === 'domain') snapshot.domains.set(r.name, { tenantId: r.tenant_id });
    else if (r.kind === 'mailbox') snapshot.mailboxes.set(r.name, { id: r.id, tenantId: r.tenant_id });
    else snapshot.aliases.set(r.name, { tenantId: r.tenant_id, goto: JSON.parse(r.goto!) as string[], active: r.active === 1 });
  }
  return snapshot;
}

/** The snapshot statement of a backend. */
export const snapshotQueryOf = (backend: Backend): SnapshotQuery => backend.choose({ sqlite: sqliteSnapshotQuery, postgres: postgresSnapshotQuery });

/** A new alias row; `goto` is the JSON array text. */
export interface NewAlias {
  tenant_id: number;
  domain_id: number;
  address: string;
  goto: string;
  is_catch_all: number;
  sender_allowed: number;
  created_at: number;
  updated_at: number;
}

/** Every other query of the aliases capability. */
export function createAliasStore() {
  return {
    /** The tenant's domain with this hostname, or undefined. */
    ownedDomain: (db: Db, tenantId: number, hostname: string) =>
      db.selectFrom('domains').select(['id', 'hostname']).where('tenant_id', '=', tenantId).where('hostname', '=', hostname).executeTakeFirst(),

    /** A domain by id still owned by the tenant, or undefined. */
    ownedDomainById: (db: Db, tenantId: number, id: number) =>
      db.selectFrom('domains').select(['id', 'hostname']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst(),

    /** For each of these addresses already in use (by anyone), whether a mailbox or an alias holds it. */
    async usesAmong(db: Db, addresses: string[]): Promise<Map<string, 'mailbox' | 'alias'>> {
      const used = new Map<string, 'mailbox' | 'alias'>();
      if (addresses.length === 0) return used;
      const rows = await db.selectFrom('mailboxes').select(['address', sql<'mailbox' | 'alias'>`'mailbox'`.as('kind')]).where('address', 'in', addresses)
        .unionAll(db.selectFrom('aliases').select(['address', sql<'mailbox' | 'alias'>`'alias'`.as('kind')]).where('address', 'in', addresses))
        .execute();
      for (const r of rows) used.set(r.address, r.kind);
      return used;
    },

    /** How many aliases (the catch-all included) a domain has. */
    countOnDomain: (db: Db, domainId: number) =>
      db.selectFrom('aliases').select((eb) => eb.fn.countAll<number>().as('n')).where('domain_id', '=', domainId)
        .executeTakeFirstOrThrow().then((r) => Number(r.n)),

    /** A tenant's mailboxes, aliases and hostnames, for loop detection. */
    async graph(db: Db, tenantId: number) {
      const mailboxes = await db.selectFrom('mailboxes').select('address').where('tenant_id', '=', tenantId).execute();
      const aliases = await db.selectFrom('aliases').select(['address', 'goto']).where('tenant_id', '=', tenantId).execute();
      const domains = await db.selectFrom('domains').select('hostname').where('tenant_id', '=', tenantId).execute();
      return {
        mailboxes: new Set(mailboxes.map((m) => m.address)),
        aliases: new Map(aliases.map((a) => [a.address, JSON.parse(a.goto) as string[]])),
        hostnames: new Set(domains.map((d) => d.hostname)),
      };
    },

    /** Inserts aliases. */
    insert: (db: Db, rows: NewAlias[]) => db.insertInto('aliases').values(rows).execute(),

    /** The tenant's alias with this address (catch-alls as `@<domain>`), with its hostname, or undefined. */
    ownedByAddress: (db: Db, tenantId: number, address: string) =>
      db.selectFrom('aliases').innerJoin('domains', 'domains.id', 'aliases.domain_id')
        .select(['aliases.id', 'aliases.address', 'aliases.goto', 'domains.hostname'])
        .where('aliases.tenant_id', '=', tenantId).where('aliases.address', '=', address).executeTakeFirst(),

    /** Changes an alias. */
    update: (db: Db, id: number, fields: { goto?: string; active?: number; sender_allowed?: number; updated_at: number }) =>
      db.updateTable('aliases').set(fields).where('id', '=', id).execute(),

    /** Deletes an alias by id. */
    remove: (db: Db, id: number) => db.deleteFrom('aliases').where('id', '=', id).execute(),

    /** A domain's aliases, ordered by address (the catch-all `@<domain>` first). */
    listForDomain: (db: Db, domainId: number) =>
      db.selectFrom('aliases').select(['address', 'goto', 'active', 'is_catch_all', 'sender_allowed', 'status'])
        .where('domain_id', '=', domainId).orderBy('address').execute(),
  };
}
export type AliasStore = ReturnType<typeof createAliasStore>;
