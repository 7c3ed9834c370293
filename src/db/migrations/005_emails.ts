import { sql, type Kysely } from 'kysely';

/**
 * Inbound ingestion (queue, message-id reservations, forwards) and stored email: a narrow `emails`
 * row for listing, cursors and search; the wide `email_contents`; attachment metadata; a
 * contentless FTS5 index keyed by email id.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE inbound (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('api', 'smtp')),
    status TEXT NOT NULL DEFAULT 'queued',
    message TEXT NOT NULL,
    targets TEXT NOT NULL,
    raw BLOB,
    raw_path TEXT,
    size INTEGER NOT NULL,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    done_at INTEGER
  )`.execute(db);
  await sql`CREATE INDEX inbound_queued ON inbound(id) WHERE status = 'queued'`.execute(db);
  await sql`CREATE TABLE inbound_reservations (
    mailbox_id INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    inbound_id INTEGER NOT NULL,
    PRIMARY KEY (mailbox_id, message_id)
  ) WITHOUT ROWID`.execute(db);
  await sql`CREATE INDEX inbound_reservations_inbound ON inbound_reservations(inbound_id)`.execute(db);
  await sql`CREATE TABLE forwards (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    inbound_id INTEGER NOT NULL REFERENCES inbound(id),
    mail_from TEXT,
    address TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error TEXT,
    created_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX forwards_queued ON forwards(next_attempt_at) WHERE status = 'queued'`.execute(db);
  await sql`CREATE INDEX forwards_inbound ON forwards(inbound_id)`.execute(db);

  // AUTOINCREMENT: an email id is never reused, even after the newest row was removed.
  await sql`CREATE TABLE emails (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    mailbox_id INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    from_email TEXT NOT NULL,
    from_name TEXT,
    to_email TEXT NOT NULL,
    subject TEXT NOT NULL,
    snippet TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    received_max INTEGER NOT NULL,
    size INTEGER NOT NULL,
    has_attachments INTEGER NOT NULL DEFAULT 0,
    read_at INTEGER,
    deleted_at INTEGER,
    updated_seq INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE UNIQUE INDEX emails_message ON emails(mailbox_id, message_id)`.execute(db);
  // The rowid is the implicit last column of each index, so (received_at, id) order needs no sort.
  await sql`CREATE INDEX emails_tenant_received ON emails(tenant_id, received_at) WHERE deleted_at IS NULL`.execute(db);
  await sql`CREATE INDEX emails_mailbox_received ON emails(mailbox_id, received_at) WHERE deleted_at IS NULL`.execute(db);
  await sql`CREATE INDEX emails_tenant_seq ON emails(tenant_id, updated_seq)`.execute(db);
  await sql`CREATE TABLE email_contents (
    email_id INTEGER PRIMARY KEY REFERENCES emails(id) ON DELETE CASCADE,
    inbound_id INTEGER,
    cc TEXT NOT NULL,
    bcc TEXT NOT NULL,
    headers TEXT NOT NULL,
    auth TEXT,
    body_text TEXT,
    body_html TEXT
  )`.execute(db);
  await sql`CREATE INDEX email_contents_inbound ON email_contents(inbound_id) WHERE inbound_id IS NOT NULL`.execute(db);
  await sql`CREATE TABLE attachments (
    id INTEGER PRIMARY KEY,
    email_id INTEGER NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    content_id TEXT,
    disposition TEXT NOT NULL,
    sha256 TEXT NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX attachments_email ON attachments(email_id)`.execute(db);
  await sql`CREATE INDEX attachments_sha256 ON attachments(sha256)`.execute(db);
  await sql`CREATE TABLE email_search_state (
    tenant_id INTEGER PRIMARY KEY,
    received_max INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE VIRTUAL TABLE emails_fts USING fts5(
    subject, body, from_email, from_name,
    content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
  )`.execute(db);
}
