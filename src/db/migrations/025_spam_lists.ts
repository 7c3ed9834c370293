import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * Spam policy per sender (DECISIONS.md section 18). `spam_lists`: allow and block entries of a tenant
 * (`mailbox_id` null) or of one of its mailboxes, a pattern `user@domain` or `@domain` (stored
 * normalised). `spam_correspondents`: addresses a mailbox wrote to or rescued from Junk (known
 * correspondents, which count only when the From domain authenticates).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE spam_lists (
    id ${t.serial},
    tenant_id ${t.int} NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    mailbox_id ${t.int} REFERENCES mailboxes(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    pattern TEXT NOT NULL,
    created_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX spam_lists_tenant ON spam_lists (tenant_id, id)`.execute(db);
  await sql`CREATE TABLE spam_correspondents (
    mailbox_id ${t.int} NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    created_at ${t.int} NOT NULL,
    PRIMARY KEY (mailbox_id, address)
  ) ${t.withoutRowid}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE spam_correspondents`.execute(db);
  await sql`DROP TABLE spam_lists`.execute(db);
}
