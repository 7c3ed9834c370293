import { sql, type Kysely } from 'kysely';
import { createEmailSearchIndex, ddl } from '../dialect.js';

/**
 * Inbound ingestion (queue, message-id reservations, forwards) and stored email: a narrow `emails`
 * row for listing, cursors and search; the wide `email_contents`; attachment metadata; a
 * full-text index keyed by email id (FTS5 on SQLite, tsvector on PostgreSQL: see dialect.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE inbound (
    id ${t.id},
    kind TEXT NOT NULL CHECK (kind IN ('api', 'smtp')),
    status TEXT NOT NULL DEFAULT 'queued',
    message TEXT NOT NULL,
    targets TEXT NOT NULL,
    raw ${t.blob},
    raw_path TEXT,
    size ${t.int} NOT NULL,
    error TEXT,
    attempts ${t.int} NOT NULL DEFAULT 0,
    created_at ${t.int} NOT NULL,
    done_at ${t.int}
  )`.execute(db);
  await sql`CREATE INDEX inbound_queued ON inbound(id) WHERE status = 'queued'`.execute(db);
  await sql`CREATE TABLE inbound_reservations (
    mailbox_id ${t.int} NOT NULL,
    message_id TEXT NOT NULL,
    inbound_id ${t.int} NOT NULL,
    PRIMARY KEY (mailbox_id, message_id)
  ) ${t.withoutRowid}`.execute(db);
  await sql`CREATE INDEX inbound_reservations_inbound ON inbound_reservations(inbound_id)`.execute(db);
  await sql`CREATE TABLE forwards (
    id ${t.id},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    inbound_id ${t.int} NOT NULL REFERENCES inbound(id),
    mail_from TEXT,
    address TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued',
    attempts ${t.int} NOT NULL DEFAULT 0,
    next_attempt_at ${t.int} NOT NULL,
    last_error TEXT,
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX forwards_queued ON forwards(next_attempt_at) WHERE status = 'queued'`.execute(db);
  await sql`CREATE INDEX forwards_inbound ON forwards(inbound_id)`.execute(db);

  // AUTOINCREMENT: an email id is never reused, even after the newest row was removed.
  await sql`CREATE TABLE emails (
    id ${t.serial},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    mailbox_id ${t.int} NOT NULL,
    message_id TEXT NOT NULL,
    from_email TEXT NOT NULL,
    from_name TEXT,
    to_email TEXT NOT NULL,
    subject TEXT NOT NULL,
    snippet TEXT NOT NULL,
    received_at ${t.int} NOT NULL,
    received_max ${t.int} NOT NULL,
    size ${t.int} NOT NULL,
    has_attachments ${t.int} NOT NULL DEFAULT 0,
    read_at ${t.int},
    deleted_at ${t.int},
    updated_seq ${t.int} NOT NULL,
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE UNIQUE INDEX emails_message ON emails(mailbox_id, message_id)`.execute(db);
  // The rowid is the implicit last column of each index, so (received_at, id) order needs no sort.
  await sql`CREATE INDEX emails_tenant_received ON emails(tenant_id, received_at) WHERE deleted_at IS NULL`.execute(db);
  await sql`CREATE INDEX emails_mailbox_received ON emails(mailbox_id, received_at) WHERE deleted_at IS NULL`.execute(db);
  await sql`CREATE INDEX emails_tenant_seq ON emails(tenant_id, updated_seq)`.execute(db);
  await sql`CREATE TABLE email_contents (
    email_id ${t.key} REFERENCES emails(id) ON DELETE CASCADE,
    inbound_id ${t.int},
    cc TEXT NOT NULL,
    bcc TEXT NOT NULL,
    headers TEXT NOT NULL,
    auth TEXT,
    body_text TEXT,
    body_html TEXT
  )`.execute(db);
  await sql`CREATE INDEX email_contents_inbound ON email_contents(inbound_id) WHERE inbound_id IS NOT NULL`.execute(db);
  await sql`CREATE TABLE attachments (
    id ${t.id},
    email_id ${t.int} NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size ${t.int} NOT NULL,
    content_id TEXT,
    disposition TEXT NOT NULL,
    sha256 TEXT NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX attachments_email ON attachments(email_id)`.execute(db);
  await sql`CREATE INDEX attachments_sha256 ON attachments(sha256)`.execute(db);
  await sql`CREATE TABLE email_search_state (
    tenant_id ${t.key},
    received_max ${t.int} NOT NULL
  )`.execute(db);
  await createEmailSearchIndex(db);
}
