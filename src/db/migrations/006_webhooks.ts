import { sql, type Kysely } from 'kysely';

/** Webhooks, their deliveries (the durable retry queue) and the log of delivery attempts. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE webhooks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    event_mask INTEGER NOT NULL,
    is_active INTEGER NOT NULL DEFAULT 1,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_until INTEGER,
    last_triggered_at INTEGER,
    failing_since INTEGER,
    deactivated_reason TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX webhooks_tenant ON webhooks(tenant_id, is_active)`.execute(db);
  // AUTOINCREMENT: a delivery id is the receiver's idempotency key, so ids are never reused.
  await sql`CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    email_id INTEGER NOT NULL,
    mailbox_id INTEGER NOT NULL,
    event_at INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    last_attempt_at INTEGER,
    final_attempt INTEGER NOT NULL DEFAULT 0,
    delivered_at INTEGER,
    created_at INTEGER NOT NULL
  )`.execute(db);
  // Serves the per-webhook claim of due rows, the next-due lookup, cascades and cancellation.
  await sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries(webhook_id, status, next_attempt_at)`.execute(db);
  await sql`CREATE TABLE webhook_attempts (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    attempted_at INTEGER NOT NULL,
    status_code INTEGER,
    latency_ms INTEGER NOT NULL,
    error TEXT
  )`.execute(db);
  await sql`CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, id)`.execute(db);
}
