import { sql, type Kysely } from 'kysely';

/** Mailboxes and aliases (forwarders and catch-alls), the recipients of inbound mail. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE mailboxes (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    domain_id INTEGER NOT NULL REFERENCES domains(id),
    address TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL DEFAULT '',
    password_hash TEXT NOT NULL,
    quota_mb INTEGER NOT NULL DEFAULT 0,
    used_bytes INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'active',
    created_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX mailboxes_domain ON mailboxes(domain_id)`.execute(db);
  await sql`CREATE INDEX mailboxes_tenant ON mailboxes(tenant_id)`.execute(db);
  await sql`CREATE TABLE aliases (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    domain_id INTEGER NOT NULL REFERENCES domains(id),
    address TEXT NOT NULL UNIQUE,
    goto TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    is_catch_all INTEGER NOT NULL DEFAULT 0,
    sender_allowed INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'active',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX aliases_domain ON aliases(domain_id)`.execute(db);
  await sql`CREATE INDEX aliases_tenant ON aliases(tenant_id)`.execute(db);
}
