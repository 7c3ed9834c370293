import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * What mail needs on PostgreSQL (DECISIONS.md section 17), where several nodes share nothing but
 * the database; on SQLite this migration does nothing (the marker lives in a shared atomic cell,
 * blobs are files under the data directory).
 *
 * - `email_marker`: one row holding the newest update marker handed out. Every writing transaction
 *   locks it first (`SELECT ... FOR UPDATE`, src/mailstore/markers.ts), takes its markers after it
 *   and writes the last one back before it commits, so commit order is marker order across nodes
 *   and sync never sees a marker appear below one it already returned.
 * - `blobs`: attachment contents, content-addressed by SHA-256 (identical contents once). A blob
 *   commits with (or before) the queue row that names it.
 * Raw messages need no table of their own: an SMTP message's bytes stay in its `inbound.raw`
 * (bytea), which `email_contents.inbound_id` names, whatever its size.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`CREATE TABLE email_marker (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    value BIGINT NOT NULL
  )`.execute(db);
  await sql`INSERT INTO email_marker (id, value) SELECT 1, coalesce(max(updated_seq), 0) FROM emails`.execute(db);
  await sql`CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY,
    data BYTEA NOT NULL,
    created_at BIGINT NOT NULL
  )`.execute(db);
  // Attachments are read back whole and written once: no point compressing what is mostly already compressed.
  await sql`ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`DROP TABLE blobs`.execute(db);
  await sql`DROP TABLE email_marker`.execute(db);
}
