import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Db } from './connection.js';
import type { Database } from './schema.js';
import { migrate } from './migrate.js';
import { createDirectoryVersion } from './pg-directory.js';
import { createNodeSession, type NodeSession } from './pg-session.js';
import { postgresBackend, tagBackend, type Backend } from './backend.js';

/** An open PostgreSQL database (DECISIONS.md section 17): Kysely over a pool of connections. */
export interface PostgresDatabase {
  /** Which database this is (the SQLite one is connection.ts's). */
  dialect: 'postgres';
  /** The backend, for wiring to choose implementations from (db/backend.ts). */
  backend: Backend;
  db: Db;
  /** The pool under `db`, for what Kysely does not do: LISTEN/NOTIFY, session advisory locks. */
  pool: pg.Pool;
  /** This node's own connection: LISTEN/NOTIFY wake-ups and session advisory locks (pg-session.ts). */
  session: NodeSession;
  /** A PostgreSQL commit is durable when it returns (synchronous_commit on): nothing to wait for. */
  durable(): Promise<void>;
  /**
   * The directory's change count (pg-directory.ts): moves when a commit on any node changed
   * domains, mailboxes, aliases, API keys or tenants' flags, and at every call while such a change
   * could go unseen. Its SQLite twin counts the writes of this process; either keys the recipient
   * resolver's cache, and on PostgreSQL the key lookup's.
   */
  changes(): number;
  close(): Promise<void>;
}

// Type OIDs (pg_type): int8 for our bigint columns, count(*) and ids; numeric for sum().
const INT8 = 20;
const NUMERIC = 1700;

/**
 * Rows come back with numbers where SQLite gives numbers: node-postgres reads int8 and numeric as
 * strings (they may exceed 2^53), but ours are millisecond timestamps, ids and counts, far below.
 * Per pool, so nothing else in the process is affected.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** How a PostgreSQL database is opened. */
export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  max?: number;
  /** Called for an error of an idle pooled connection (the server went away); the pool replaces it. */
  onIdleError?(err: Error): void;
  /** Called with each failed query and its SQL (debug logging: most failures are answered as designed). */
  onQueryError?(err: unknown, sql: string): void;
}

/** A pool on `url` with our type parsers, without migrating. */
export function openPool(url: string, opts: PostgresOptions = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, types, application_name: 'mailstead' });
  // Without a listener an idle connection's error (a restarted server) would end the process.
  pool.on('error', (err) => opts.onIdleError?.(err));
  return pool;
}

/** The pool and URL under each open PostgreSQL Kysely handle (see `pgPoolOf`). */
const pools = new WeakMap<Db, { pool: pg.Pool; url: string }>();

/**
 * The pool and URL under a PostgreSQL handle opened here: the hot reads (emails/pg-reads.ts) send
 * their statements to the driver directly, for rows as arrays and prepared statements, which
 * Kysely does not give, and reader threads open pools of their own on the same URL.
 */
export function pgPoolOf(db: Db): { pool: pg.Pool; url: string } {
  const known = pools.get(db);
  if (!known) throw new Error('not a PostgreSQL handle opened by openPostgresDatabase');
  return known;
}

/** Opens the database at `url` and runs pending migrations (the same numbered ones as SQLite's). */
export async function openPostgresDatabase(url: string, opts: PostgresOptions = {}): Promise<PostgresDatabase> {
  const pool = openPool(url, opts);
  const session = createNodeSession(pool, opts.onIdleError);
  const directory = createDirectoryVersion(session);
  const db: Db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    plugins: [directory.plugin],
    log: (event) => { if (event.level === 'error') opts.onQueryError?.(event.error, event.query.sql); },
  });
  tagBackend(db, postgresBackend);
  try {
    await migrate(db);
  } catch (err) {
    await session.close();
    await db.destroy();
    throw err;
  }
  pools.set(db, { pool, url });
  return {
    dialect: 'postgres',
    backend: postgresBackend,
    db,
    pool,
    session,
    durable: async () => {},
    changes: directory.changes,
    close: async () => {
      await session.close();
      await db.destroy(); // ends the pool too
    },
  };
}
