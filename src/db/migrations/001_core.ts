import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/** Tenants, API keys, the task queue, domains with their DNS records, and cooldown counters. */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE tenants (
    id ${t.id},
    name TEXT NOT NULL UNIQUE,
    plan_active ${t.int} NOT NULL DEFAULT 0,
    is_admin ${t.int} NOT NULL DEFAULT 0,
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE TABLE api_keys (
    id ${t.id},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    key_hash TEXT NOT NULL UNIQUE,
    perms TEXT NOT NULL,
    revoked_at ${t.int},
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE TABLE tasks (
    id ${t.serial},
    kind TEXT NOT NULL,
    tenant_id ${t.int} REFERENCES tenants(id) ON DELETE CASCADE,
    key_id ${t.int} REFERENCES api_keys(id) ON DELETE CASCADE,
    domain TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'queued',
    payload TEXT NOT NULL DEFAULT '{}',
    result TEXT,
    total_email ${t.int} NOT NULL DEFAULT 0,
    error TEXT,
    attempts ${t.int} NOT NULL DEFAULT 0,
    run_after ${t.int} NOT NULL,
    created_at ${t.int} NOT NULL,
    started_at ${t.int},
    finished_at ${t.int}
  )`.execute(db);
  await sql`CREATE INDEX tasks_ready ON tasks(status, run_after, id)`.execute(db);
  await sql`CREATE TABLE domains (
    id ${t.id},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    hostname TEXT NOT NULL UNIQUE,
    parent_id ${t.int} REFERENCES domains(id),
    domain_type TEXT NOT NULL CHECK (domain_type IN ('root', 'sub')),
    status TEXT NOT NULL DEFAULT 'pending',
    total_mailbox_allowed ${t.int} NOT NULL,
    quota_gb ${t.int} NOT NULL DEFAULT 0,
    verification_token TEXT NOT NULL,
    dkim_private_key TEXT,
    dkim_public_key TEXT,
    failed_checks ${t.int} NOT NULL DEFAULT 0,
    last_checked_at ${t.int},
    verified_at ${t.int},
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX domains_tenant ON domains(tenant_id, hostname)`.execute(db);
  await sql`CREATE INDEX domains_parent ON domains(parent_id)`.execute(db);
  await sql`CREATE TABLE dns_records (
    id ${t.id},
    domain_id ${t.int} NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    position ${t.int} NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    priority TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'Not checked',
    checked_at ${t.int},
    UNIQUE (domain_id, position)
  )`.execute(db);
  await sql`CREATE TABLE cooldowns (
    scope TEXT NOT NULL,
    key_id ${t.int} NOT NULL,
    subject TEXT NOT NULL,
    last_at ${t.int} NOT NULL,
    PRIMARY KEY (scope, key_id, subject)
  )`.execute(db);
}
