import { sql, type Kysely } from 'kysely';
import { ddl } from '../dialect.js';

/**
 * IMAP's per-message summary (src/imap/summary.ts): RFC822.SIZE, ENVELOPE and BODYSTRUCTURE as
 * FETCH answers them, so a header sync reads rows instead of parsing every raw message. A table of
 * its own, like email_raw, rather than columns of `emails`: that narrow row is what list pages and
 * cursors read, and 0.5-3 KB of IMAP text per message would multiply its pages. Every column is
 * nullable and nothing is filled in here (databases hold a million messages): a message without a
 * row or with NULLs gets its summary computed at its first FETCH and written back.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const t = ddl(db);
  await sql`CREATE TABLE email_imap (
    email_id ${t.key} REFERENCES emails(id) ON DELETE CASCADE,
    size ${t.int},
    envelope TEXT,
    bodystructure TEXT
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE email_imap`.execute(db);
}
