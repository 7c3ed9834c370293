import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { dialectOf } from '../db/dialect.js';
import type { RecipientSnapshot } from './resolver.js';

interface SnapshotRow {
  kind: 'mailbox' | 'alias' | 'domain';
  name: string;
  tenant_id: number;
  id: number;
  goto: string | null;
  active: number | null;
}

/**
 * Reads, in one statement, every row a resolution of `address` may need: the addresses reachable
 * through active aliases and catch-alls (a recursive walk; UNION drops repeats, so loops end), their
 * mailboxes and aliases, and the domains they are on.
 */
export async function readRecipientSnapshot(db: Db, address: string): Promise<RecipientSnapshot> {
  const query = dialectOf(db) === 'postgres' ? postgresSnapshot(address) : sql<SnapshotRow>`
    WITH RECURSIVE reach(addr) AS (
      SELECT ${address}
      UNION
      SELECT j.value FROM reach r
        JOIN aliases a ON a.address = r.addr AND a.active = 1
        JOIN json_each(a.goto) j
        WHERE NOT EXISTS (SELECT 1 FROM mailboxes m WHERE m.address = r.addr)
      UNION
      SELECT '@' || substr(r.addr, instr(r.addr, '@') + 1) FROM reach r
        WHERE substr(r.addr, 1, 1) <> '@'
          AND NOT EXISTS (SELECT 1 FROM mailboxes m WHERE m.address = r.addr)
          AND NOT EXISTS (SELECT 1 FROM aliases a WHERE a.address = r.addr AND a.active = 1)
    )
    SELECT 'mailbox' AS kind, m.address AS name, m.tenant_id AS tenant_id, m.id AS id, NULL AS goto, NULL AS active
      FROM mailboxes m WHERE m.address IN (SELECT addr FROM reach)
    UNION ALL
    SELECT 'alias', a.address, a.tenant_id, a.id, a.goto, a.active
      FROM aliases a WHERE a.address IN (SELECT addr FROM reach)
    UNION ALL
    SELECT 'domain', d.hostname, d.tenant_id, d.id, NULL, NULL
      FROM domains d WHERE d.hostname IN (SELECT substr(addr, instr(addr, '@') + 1) FROM reach)
  `;
  const { rows } = await query.execute(db);
  const snapshot = { domains: new Map(), mailboxes: new Map(), aliases: new Map() } satisfies RecipientSnapshot;
  for (const r of rows) {
    if (r.kind === 'domain') snapshot.domains.set(r.name, { tenantId: r.tenant_id });
    else if (r.kind === 'mailbox') snapshot.mailboxes.set(r.name, { id: r.id, tenantId: r.tenant_id });
    else snapshot.aliases.set(r.name, { tenantId: r.tenant_id, goto: JSON.parse(r.goto!) as string[], active: r.active === 1 });
  }
  return snapshot;
}

/**
 * The same walk for PostgreSQL, whose recursive term may name `reach` once: both steps (an
 * alias's destinations, the catch-all of an address nothing else takes) are one lateral union.
 */
function postgresSnapshot(address: string) {
  return sql<SnapshotRow>`
    WITH RECURSIVE reach(addr) AS (
      SELECT ${address}::text
      UNION
      SELECT step.addr FROM reach r CROSS JOIN LATERAL (
        SELECT j.value AS addr FROM aliases a CROSS JOIN json_array_elements_text(a.goto::json) AS j(value)
          WHERE a.address = r.addr AND a.active = 1
            AND NOT EXISTS (SELECT 1 FROM mailboxes m WHERE m.address = r.addr)
        UNION ALL
        SELECT '@' || substr(r.addr, strpos(r.addr, '@') + 1)
          WHERE substr(r.addr, 1, 1) <> '@'
            AND NOT EXISTS (SELECT 1 FROM mailboxes m WHERE m.address = r.addr)
            AND NOT EXISTS (SELECT 1 FROM aliases a WHERE a.address = r.addr AND a.active = 1)
      ) AS step
    )
    SELECT 'mailbox' AS kind, m.address AS name, m.tenant_id AS tenant_id, m.id AS id, NULL AS goto, NULL::bigint AS active
      FROM mailboxes m WHERE m.address IN (SELECT addr FROM reach)
    UNION ALL
    SELECT 'alias', a.address, a.tenant_id, a.id, a.goto, a.active
      FROM aliases a WHERE a.address IN (SELECT addr FROM reach)
    UNION ALL
    SELECT 'domain', d.hostname, d.tenant_id, d.id, NULL, NULL
      FROM domains d WHERE d.hostname IN (SELECT substr(addr, strpos(addr, '@') + 1) FROM reach)
  `;
}

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
