import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * The builtin spam filter (DECISIONS.md section 18). `spam_tokens`: in how many spam and ham
 * messages each hashed feature occurred, per model: a mailbox's (`mailbox_id` > 0) and its tenant's
 * (`mailbox_id` = 0), so PostgreSQL nodes share one model. `spam_totals`: messages trained per
 * model. `spam_trained`: what each message (by mailbox and Message-ID, so an IMAP copy is the same
 * message) contributed, so training it the other way replaces that. `email_spam`: the verdict of
 * each classified copy (its JSON as GET /v1/emails shows it), also the source of its trace header.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE spam_tokens (
    tenant_id ${t.int} NOT NULL,
    mailbox_id ${t.int} NOT NULL,
    token ${t.int} NOT NULL,
    spam ${t.int} NOT NULL DEFAULT 0,
    ham ${t.int} NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, mailbox_id, token)
  ) ${t.withoutRowid}`.execute(db);
  await sql`CREATE TABLE spam_totals (
    tenant_id ${t.int} NOT NULL,
    mailbox_id ${t.int} NOT NULL,
    spam ${t.int} NOT NULL DEFAULT 0,
    ham ${t.int} NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, mailbox_id)
  ) ${t.withoutRowid}`.execute(db);
  await sql`CREATE TABLE spam_trained (
    mailbox_id ${t.int} NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL,
    tenant_id ${t.int} NOT NULL,
    class TEXT NOT NULL,
    trained_at ${t.int} NOT NULL,
    PRIMARY KEY (mailbox_id, message_id)
  ) ${t.withoutRowid}`.execute(db);
  await sql`CREATE TABLE email_spam (
    email_id ${t.key} REFERENCES emails(id) ON DELETE CASCADE,
    verdict TEXT NOT NULL
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['email_spam', 'spam_trained', 'spam_totals', 'spam_tokens']) await sql`DROP TABLE ${sql.table(table)}`.execute(db);
}
