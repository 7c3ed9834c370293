import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/** Webhooks, their deliveries (the durable retry queue) and the log of delivery attempts. */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE webhooks (
    id ${t.serial},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    event_mask ${t.int} NOT NULL,
    is_active ${t.int} NOT NULL DEFAULT 1,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_until ${t.int},
    last_triggered_at ${t.int},
    failing_since ${t.int},
    deactivated_reason TEXT,
    created_at ${t.int} NOT NULL,
    updated_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX webhooks_tenant ON webhooks(tenant_id, is_active)`.execute(db);
  // AUTOINCREMENT: a delivery id is the receiver's idempotency key, so ids are never reused.
  await sql`CREATE TABLE webhook_deliveries (
    id ${t.serial},
    webhook_id ${t.int} NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id ${t.int} NOT NULL,
    event_type TEXT NOT NULL,
    email_id ${t.int} NOT NULL,
    mailbox_id ${t.int} NOT NULL,
    event_at ${t.int} NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sending', 'delivered', 'failed')),
    attempts ${t.int} NOT NULL DEFAULT 0,
    next_attempt_at ${t.int},
    last_attempt_at ${t.int},
    final_attempt ${t.int} NOT NULL DEFAULT 0,
    delivered_at ${t.int},
    created_at ${t.int} NOT NULL
  )`.execute(db);
  // Serves the per-webhook claim of due rows, the next-due lookup, cascades and cancellation.
  await sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries(webhook_id, status, next_attempt_at)`.execute(db);
  await sql`CREATE TABLE webhook_attempts (
    id ${t.id},
    delivery_id ${t.int} NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt ${t.int} NOT NULL,
    attempted_at ${t.int} NOT NULL,
    status_code ${t.int},
    latency_ms ${t.int} NOT NULL,
    error TEXT
  )`.execute(db);
  await sql`CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, id)`.execute(db);
}
