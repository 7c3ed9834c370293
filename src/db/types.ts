import type { Generated } from 'kysely';

/** Milliseconds since the epoch, as stored. */
type Ms = number;

export interface TenantsTable {
  id: Generated<number>;
  name: string;
  plan_active: number;
  is_admin: number;
  created_at: Ms;
}

export interface ApiKeysTable {
  id: Generated<number>;
  tenant_id: number;
  key_hash: string;
  perms: string;
  revoked_at: Ms | null;
  created_at: Ms;
}

export interface TasksTable {
  id: Generated<number>;
  kind: string;
  tenant_id: number | null;
  key_id: number | null;
  domain: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  payload: string;
  result: string | null;
  total_email: number;
  error: string | null;
  attempts: Generated<number>;
  run_after: Ms;
  created_at: Ms;
  started_at: Ms | null;
  finished_at: Ms | null;
}

export interface DomainsTable {
  id: Generated<number>;
  tenant_id: number;
  hostname: string;
  parent_id: number | null;
  domain_type: 'root' | 'sub';
  status: Generated<string>;
  total_mailbox_allowed: number;
  quota_gb: Generated<number>;
  verification_token: string;
  dkim_private_key: string | null;
  dkim_public_key: string | null;
  failed_checks: Generated<number>;
  last_checked_at: Ms | null;
  verified_at: Ms | null;
  created_at: Ms;
}

export interface DnsRecordsTable {
  id: Generated<number>;
  domain_id: number;
  position: number;
  type: string;
  name: string;
  value: string;
  priority: string;
  status: Generated<string>;
  checked_at: Ms | null;
}

export interface CooldownsTable {
  scope: string;
  key_id: number;
  subject: string;
  last_at: Ms;
}

/** The tables of the foundation; capabilities extend Database with their own in db/schema.ts. */
export interface CoreTables {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  tasks: TasksTable;
  domains: DomainsTable;
  dns_records: DnsRecordsTable;
  cooldowns: CooldownsTable;
}

export interface MailboxesTable {
  id: Generated<number>;
  tenant_id: number;
  domain_id: number;
  address: string;
  display_name: Generated<string>;
  password_hash: string;
  quota_mb: Generated<number>;
  used_bytes: Generated<number>;
  status: Generated<string>;
  created_at: Ms;
}

export interface AliasesTable {
  id: Generated<number>;
  tenant_id: number;
  domain_id: number;
  /** The alias address, or `@<domain>` for the catch-all. */
  address: string;
  /** JSON array of destination addresses. */
  goto: string;
  active: Generated<number>;
  is_catch_all: Generated<number>;
  sender_allowed: Generated<number>;
  status: Generated<string>;
  created_at: Ms;
  updated_at: Ms;
}

export interface EventsTable {
  id: Generated<number>;
  tenant_id: number;
  type: string;
  email_id: number;
  mailbox_id: number;
  created_at: Ms;
}

/** Mailboxes, aliases and the event log (shared by mailboxes, aliases, ingest and webhooks). */
export interface RecipientTables {
  mailboxes: MailboxesTable;
  aliases: AliasesTable;
  events: EventsTable;
}
