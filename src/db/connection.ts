import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import { migrate } from './migrate.js';
import { createWalSync } from './durability.js';
import { startCheckpointer } from './checkpointer.js';
import { sqliteBackend, tagBackend, type Backend } from './backend.js';

/** The Kysely handle every store takes; a transaction is also one. */
export type Db = Kysely<Database>;
/** A Kysely transaction over the same schema. */
export type Trx = Transaction<Database>;

/** An open SQLite database: Kysely for queries, the raw handle for backups and pragmas. */
export interface Database_ {
  /** Which database this is (see open.ts for the PostgreSQL one). */
  dialect: 'sqlite';
  /** The backend, for wiring to choose implementations from (db/backend.ts). */
  backend: Backend;
  db: Db;
  sqlite: BetterSqlite3.Database;
  /** Resolves once every transaction committed before the call survives a power cut. */
  durable(): Promise<void>;
  /** Rows inserted, updated or deleted through this connection since it opened (total_changes()). */
  changes(): number;
  close(): Promise<void>;
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running most of our
 * queries. Statements are reusable in better-sqlite3, so keep the most recent ones by SQL text. The
 * driver's mutex means a statement is never used by two queries at once.
 */
function withStatementCache(sqlite: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      // Two connections write (the server's and the storage thread's): a transaction that read
      // first and then wrote could find its snapshot stale and fail with SQLITE_BUSY at once,
      // while BEGIN IMMEDIATE waits for the write lock up front (busy_timeout) and then cannot fail.
      const sql = text === 'begin' ? 'begin immediate' : text;
      let stmt = cache.get(sql);
      if (stmt) {
        // Refresh its place so the least recently used statement is the one dropped.
        cache.delete(sql);
      } else {
        stmt = sqlite.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

/** The database file inside a data directory. */
export const databaseFile = (dataDir: string) => join(dataDir, 'mailstead.db');

/** WAL length (pages, 64 MB) at which a writer with background checkpoints runs its own. */
export const BACKGROUND_RESTART_PAGES = 16_384;

/** How a connection is opened. */
export interface ConnectionOptions {
  synchronous?: 'NORMAL' | 'FULL';
  cacheMb?: number;
  /**
   * 'background': the server's checkpoint thread (checkpointer.ts) copies the WAL into the
   * database; this connection's commits do only once the WAL is BACKGROUND_RESTART_PAGES long.
   * Default: SQLite's automatic checkpoint inside a commit.
   */
  checkpoints?: 'background' | 'auto';
}

/**
 * One connection to a data directory's database with the pragmas every connection needs, without
 * migrating: for a second connection in the same process (the storage thread) once the first one
 * ran the migrations.
 */
export function openConnection(dataDir: string, opts: ConnectionOptions = {}) {
  const sqlite = new BetterSqlite3(databaseFile(dataDir));
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${opts.synchronous ?? 'NORMAL'}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma(`cache_size = -${(opts.cacheMb ?? 32) * 1024}`);
  // The checkpoint thread copies the frames and starts the WAL over; a commit checkpoints only if
  // it cannot (a writer that never pauses), as a backstop against a WAL that grows without end.
  if (opts.checkpoints === 'background') sqlite.pragma(`wal_autocheckpoint = ${BACKGROUND_RESTART_PAGES}`);
  const db: Db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  tagBackend(db, sqliteBackend);
  return { db, sqlite };
}

/**
 * Opens (creating if needed) the SQLite database of a data directory, with WAL so the CLI and the
 * server can share it, foreign keys on, and a busy timeout for the moments another process holds
 * the write lock. Runs pending migrations. The server runs synchronous=NORMAL and makes commits
 * durable before it acknowledges them with `durable()` (see durability.ts); short-lived callers
 * such as the CLI ask for FULL, so each of their commits is durable by itself.
 */
export async function openDatabase(dataDir: string, opts: Omit<ConnectionOptions, 'cacheMb'> & { onCheckpointError?(err: unknown): void } = {}): Promise<Database_> {
  mkdirSync(dataDir, { recursive: true });
  // 2 MB: the server's own connection writes provisioning and answers reads only until reader
  // threads start (read-pool.ts); a larger cache only held pages the OS page cache also holds.
  const { db, sqlite } = openConnection(dataDir, { cacheMb: 2, ...opts });
  try {
    await migrate(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const wal = createWalSync(`${databaseFile(dataDir)}-wal`);
  const checkpointer = opts.checkpoints === 'background' ? startCheckpointer(databaseFile(dataDir), { onError: opts.onCheckpointError }) : null;
  const totalChanges = sqlite.prepare('SELECT total_changes()').pluck();
  return {
    dialect: 'sqlite',
    backend: sqliteBackend,
    db,
    sqlite,
    changes: () => totalChanges.get() as number,
    durable: () => wal.flush(),
    close: async () => {
      await checkpointer?.close();
      await db.destroy();
      wal.close();
    },
  };
}
