import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/** The durable record of email events (received, read, deleted) that webhooks fan out. */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE events (
    id ${t.id},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    email_id ${t.int} NOT NULL,
    mailbox_id ${t.int} NOT NULL,
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX events_tenant ON events(tenant_id, id)`.execute(db);
}
