import { sql, type Kysely } from 'kysely';

/** The durable record of email events (received, read, deleted) that webhooks fan out. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    email_id INTEGER NOT NULL,
    mailbox_id INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX events_tenant ON events(tenant_id, id)`.execute(db);
}
