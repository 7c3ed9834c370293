import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * Sieve (DECISIONS.md section 19): each mailbox's scripts (at most 10 of 64 KB, at most one active;
 * the partial unique index makes "one active" the database's rule, so two nodes activating at once
 * cannot both win), and the vacation settings of the REST endpoint, kept apart from the scripts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE sieve_scripts (
    id ${t.id},
    mailbox_id ${t.int} NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    script TEXT NOT NULL,
    size ${t.int} NOT NULL,
    active ${t.int} NOT NULL DEFAULT 0,
    created_at ${t.int} NOT NULL,
    updated_at ${t.int} NOT NULL
  )`.execute(db);
  await sql`CREATE UNIQUE INDEX sieve_scripts_name ON sieve_scripts (mailbox_id, name)`.execute(db);
  await sql`CREATE UNIQUE INDEX sieve_scripts_active ON sieve_scripts (mailbox_id) WHERE active = 1`.execute(db);
  await sql`CREATE TABLE vacation_settings (
    mailbox_id ${t.key} REFERENCES mailboxes(id) ON DELETE CASCADE,
    enabled ${t.int} NOT NULL,
    subject TEXT,
    body TEXT NOT NULL,
    days ${t.int} NOT NULL,
    start_date TEXT,
    end_date TEXT,
    updated_at ${t.int} NOT NULL
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE vacation_settings`.execute(db);
  await sql`DROP TABLE sieve_scripts`.execute(db);
}
