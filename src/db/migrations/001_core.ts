import { sql, type Kysely } from 'kysely';

/** Tenants, API keys, the task queue, domains with their DNS records, and cooldown counters. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE tenants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    plan_active INTEGER NOT NULL DEFAULT 0,
    is_admin INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    key_hash TEXT NOT NULL UNIQUE,
    perms TEXT NOT NULL,
    revoked_at INTEGER,
    created_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE TABLE tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    tenant_id INTEGER REFERENCES tenants(id) ON DELETE CASCADE,
    key_id INTEGER REFERENCES api_keys(id) ON DELETE CASCADE,
    domain TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'queued',
    payload TEXT NOT NULL DEFAULT '{}',
    result TEXT,
    total_email INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    run_after INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER
  )`.execute(db);
  await sql`CREATE INDEX tasks_ready ON tasks(status, run_after, id)`.execute(db);
  await sql`CREATE TABLE domains (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    hostname TEXT NOT NULL UNIQUE,
    parent_id INTEGER REFERENCES domains(id),
    domain_type TEXT NOT NULL CHECK (domain_type IN ('root', 'sub')),
    status TEXT NOT NULL DEFAULT 'pending',
    total_mailbox_allowed INTEGER NOT NULL,
    quota_gb INTEGER NOT NULL DEFAULT 0,
    verification_token TEXT NOT NULL,
    dkim_private_key TEXT,
    dkim_public_key TEXT,
    failed_checks INTEGER NOT NULL DEFAULT 0,
    last_checked_at INTEGER,
    verified_at INTEGER,
    created_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX domains_tenant ON domains(tenant_id, hostname)`.execute(db);
  await sql`CREATE INDEX domains_parent ON domains(parent_id)`.execute(db);
  await sql`CREATE TABLE dns_records (
    id INTEGER PRIMARY KEY,
    domain_id INTEGER NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    priority TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'Not checked',
    checked_at INTEGER,
    UNIQUE (domain_id, position)
  )`.execute(db);
  await sql`CREATE TABLE cooldowns (
    scope TEXT NOT NULL,
    key_id INTEGER NOT NULL,
    subject TEXT NOT NULL,
    last_at INTEGER NOT NULL,
    PRIMARY KEY (scope, key_id, subject)
  )`.execute(db);
}
