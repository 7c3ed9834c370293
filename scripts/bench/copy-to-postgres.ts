/**
 * Copies a seeded SQLite data dir's database into an empty PostgreSQL database, so read.ts reads
 * the same mail in both modes (the same ids, times and words, so the same cursors and `q`
 * answers). The PostgreSQL schema comes from our own migrations (openPostgresDatabase runs them);
 * then every table both databases have is copied, the columns they share, in bounded batches
 * through `pg` with bound parameters. What SQLite keeps in a different shape is built here:
 * - emails_fts: on PostgreSQL one weighted `tsvector` per email (dialect.ts), written by the
 *   writer's own statement (pg-store.ts `indexFts`) from the four fields FTS5 indexes, the body
 *   taken as the writer takes it (text.ts `plainText`, its first INDEXED_BODY_CHARS).
 * - email_marker (migration 013): the newest update marker, which every writer locks and raises.
 * - identity columns: their sequences continue after the copied ids.
 * Then VACUUM ANALYZE, so the planner has statistics and index-only scans their visibility map, as
 * autovacuum would give a database that has been running.
 */
import Database from 'better-sqlite3';
import type pg from 'pg';
import { openPostgresDatabase, type PostgresDatabase } from '../../src/db/postgres.js';
import { postgresEmailWrites as pgStore } from '../../src/mailstore/postgres/email-writes.js';
import type { EmailsFtsTable } from '../../src/db/tables/emails.js';
import { INDEXED_BODY_CHARS, plainText } from '../../src/message/text.js';

/** Tables not copied: each database's own migration bookkeeping, and what is built here instead. */
const NOT_COPIED = new Set(['kysely_migration', 'kysely_migration_lock', 'emails_fts', 'email_marker']);
/** Rows per INSERT, and at most this many bound parameters in one (PostgreSQL allows 65,535). */
const BATCH_ROWS = 1000;
const MAX_PARAMETERS = 60_000;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Copies `sqliteFile` into the empty database at `url`; returns the rows copied per table. */
export async function copyToPostgres(sqliteFile: string, url: string): Promise<Record<string, number>> {
  const source = new Database(sqliteFile, { readonly: true });
  const target = await openPostgresDatabase(url, { max: 1 });
  const client = await target.pool.connect();
  let released = false;
  const copied: Record<string, number> = {};
  try {
    // The rows arrive table by table, not in foreign-key order: replica mode skips the FK triggers.
    await client.query('SET session_replication_role = replica');
    const sqliteTables = new Set((source.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
    const pgTables = (await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
    )).rows.map((r) => r.table_name);
    for (const table of pgTables) {
      if (NOT_COPIED.has(table) || !sqliteTables.has(table)) continue;
      copied[table] = await copyTable(source, client, table);
    }
    await client.query('BEGIN');
    await client.query('UPDATE email_marker SET value = (SELECT coalesce(max(updated_seq), 0) FROM emails) WHERE id = 1');
    const identities = await client.query<{ table_name: string; column_name: string }>(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES'",
    );
    for (const { table_name: t, column_name: c } of identities.rows) {
      await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${quote(c)}) FROM ${quote(t)}), 0) + 1, false)`, [t, c]);
    }
    await client.query('COMMIT');
    await client.query('SET session_replication_role = DEFAULT');
    client.release();
    released = true;
    copied.emails_fts = await indexSearch(source, target);
    const again = await target.pool.connect();
    try { await again.query('VACUUM ANALYZE'); } finally { again.release(); }
    return copied;
  } finally {
    if (!released) client.release();
    source.close();
    await target.close();
  }
}

/** One table's rows, the columns both sides have, in one transaction of bounded INSERTs. */
async function copyTable(source: Database.Database, client: pg.PoolClient, table: string): Promise<number> {
  const sqliteColumns = new Set((source.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>).map((r) => r.name));
  const columns = (await client.query<{ column_name: string }>(
    "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position", [table],
  )).rows.map((r) => r.column_name).filter((c) => sqliteColumns.has(c));
  if (columns.length === 0) return 0;
  const rowsPerInsert = Math.max(1, Math.min(BATCH_ROWS, Math.floor(MAX_PARAMETERS / columns.length)));
  const insert = (rows: unknown[][]) => {
    const values = rows.map((_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(', ')})`).join(', ');
    return client.query(`INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES ${values}`, rows.flat());
  };
  let count = 0;
  let batch: unknown[][] = [];
  await client.query('BEGIN');
  // raw(): rows as arrays in the column order asked for.
  for (const row of source.prepare(`SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)}`).raw().iterate() as IterableIterator<unknown[]>) {
    batch.push(row);
    if (batch.length === rowsPerInsert) {
      await insert(batch);
      count += batch.length;
      batch = [];
    }
  }
  if (batch.length) {
    await insert(batch);
    count += batch.length;
  }
  await client.query('COMMIT');
  return count;
}

/** Search documents for every copied email, through the writer's statement, in bounded batches (one transaction each). */
async function indexSearch(source: Database.Database, target: PostgresDatabase): Promise<number> {
  const rows = source.prepare(`SELECT e.id, e.subject, c.body_text, c.body_html, e.from_email, e.from_name
    FROM emails e JOIN email_contents c ON c.email_id = e.id ORDER BY e.id`).iterate() as IterableIterator<{
    id: number; subject: string; body_text: string | null; body_html: string | null; from_email: string; from_name: string | null;
  }>;
  let count = 0;
  let batch: EmailsFtsTable[] = [];
  const flush = async () => {
    await target.db.transaction().execute((trx) => pgStore.indexFts(trx, batch));
    count += batch.length;
    batch = [];
  };
  for (const r of rows) {
    batch.push({ rowid: r.id, subject: r.subject, body: plainText(r.body_text, r.body_html).slice(0, INDEXED_BODY_CHARS), from_email: r.from_email, from_name: r.from_name ?? '' });
    if (batch.length === BATCH_ROWS) await flush();
  }
  if (batch.length) await flush();
  return count;
}
