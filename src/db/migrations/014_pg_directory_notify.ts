import { sql, type Kysely } from 'kysely';
import { backendOf } from '../backend.js';

/** The channel a committed change of the recipient directory is announced on (pg-directory.ts listens). */
export const DIRECTORY_CHANNEL = 'mailstead_directory';

/**
 * Directory changes announced to every node on PostgreSQL (DECISIONS.md section 17): a commit that
 * inserts, deletes or re-addresses a row the recipient resolver reads (domains, mailboxes, aliases;
 * src/aliases/store.ts readRecipientSnapshot) NOTIFYs `mailstead_directory`, so each node's
 * resolver cache knows when its answers may be old, whichever node (or the CLI) wrote. Statement
 * triggers: one NOTIFY per statement, and PostgreSQL folds identical ones of a transaction into
 * one, delivered at commit (never for a rollback). Updates of columns the resolver does not read
 * (quota usage, DKIM keys, DNS check times: written all the time under mail) announce nothing.
 * Cascaded deletes (a tenant going) fire the triggers of the rows they take. SQLite needs none:
 * its one process counts its own writes (total_changes()).
 */
const TRIGGERS: Array<{ table: string; update: string }> = [
  { table: 'domains', update: 'UPDATE OF hostname, tenant_id' },
  { table: 'mailboxes', update: 'UPDATE OF address, tenant_id' },
  { table: 'aliases', update: 'UPDATE' },
];

export async function up(db: Kysely<any>): Promise<void> {
  if (backendOf(db).kind !== 'postgres') return;
  await sql`CREATE FUNCTION mailstead_directory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify(${sql.lit(DIRECTORY_CHANNEL)}, '');
      RETURN NULL;
    END $$`.execute(db);
  for (const { table, update } of TRIGGERS) {
    await sql`CREATE TRIGGER ${sql.raw(`${table}_directory_changed`)}
      AFTER INSERT OR DELETE OR ${sql.raw(update)} ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION mailstead_directory_changed()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (backendOf(db).kind !== 'postgres') return;
  for (const { table } of TRIGGERS) await sql`DROP TRIGGER ${sql.raw(`${table}_directory_changed`)} ON ${sql.table(table)}`.execute(db);
  await sql`DROP FUNCTION mailstead_directory_changed()`.execute(db);
}
