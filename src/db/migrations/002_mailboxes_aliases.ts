import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/** Mailboxes and aliases (forwarders and catch-alls), the recipients of inbound mail. */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE mailboxes (
    id ${t.id},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    domain_id ${t.int} NOT NULL REFERENCES domains(id),
    address TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL DEFAULT '',
    password_hash TEXT NOT NULL,
    quota_mb ${t.int} NOT NULL DEFAULT 0,
    used_bytes ${t.int} NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'active',
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX mailboxes_domain ON mailboxes(domain_id)`.execute(db);
  await sql`CREATE INDEX mailboxes_tenant ON mailboxes(tenant_id)`.execute(db);
  await sql`CREATE TABLE aliases (
    id ${t.id},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    domain_id ${t.int} NOT NULL REFERENCES domains(id),
    address TEXT NOT NULL UNIQUE,
    goto TEXT NOT NULL,
    active ${t.int} NOT NULL DEFAULT 1,
    is_catch_all ${t.int} NOT NULL DEFAULT 0,
    sender_allowed ${t.int} NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'active',
    created_at ${t.int} NOT NULL,
    updated_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX aliases_domain ON aliases(domain_id)`.execute(db);
  await sql`CREATE INDEX aliases_tenant ON aliases(tenant_id)`.execute(db);
}
