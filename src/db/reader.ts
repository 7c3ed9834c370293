import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import type { Db } from './connection.js';

/**
 * A read-only connection beside the process's Kysely connection, for the hot read paths (key
 * authentication, listing, search, sync, get) as prepared statements run straight on
 * better-sqlite3: building a query with Kysely and passing it through its driver costs more than
 * running most of these queries.
 *
 * Being a connection of its own, it only ever sees committed data (WAL: a reader sees every commit
 * made before its statement starts, by this process or any other), never the inside of a
 * transaction that the main connection holds open across awaits, and it does not queue behind such
 * a transaction either. The same kind of connection serves the email reader threads
 * (src/emails/read-pool.ts).
 */
export interface Reader {
  /** A prepared statement of this SQL, cached by its text; `raw`: rows come as arrays (no object per row). */
  prepare(text: string, raw?: boolean): BetterSqlite3.Statement;
  /** Runs SQL that returns nothing (setup such as temp tables). */
  exec(text: string): void;
  /** Runs `fn` in one read transaction, so all its statements see the same snapshot. */
  snapshot<T>(fn: () => T): T;
  close(): void;
}

const STATEMENT_CACHE_SIZE = 1000;

/** Opens a read-only connection to a database file (which must exist). */
export function openReader(file: string): Reader {
  const sqlite = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma('cache_size = -8192');
  const cache = new Map<string, BetterSqlite3.Statement>();
  const begin = sqlite.prepare('BEGIN');
  const commit = sqlite.prepare('COMMIT');
  return {
    prepare(text, raw = false) {
      const key = raw ? `raw:${text}` : text;
      let stmt = cache.get(key);
      if (!stmt) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        stmt = sqlite.prepare(text);
        if (raw) stmt.raw(true);
        cache.set(key, stmt);
      }
      return stmt;
    },
    exec: (text) => { sqlite.exec(text); },
    snapshot(fn) {
      begin.run();
      try {
        return fn();
      } finally {
        commit.run();
      }
    },
    close: () => { if (sqlite.open) sqlite.close(); },
  };
}

/** The database file of a Kysely connection (its `main` schema). */
export async function databaseFileOf(db: Db): Promise<string> {
  const { rows } = await sql<{ name: string; file: string }>`PRAGMA database_list`.execute(db);
  const file = rows.find((r) => r.name === 'main')?.file;
  if (!file) throw new Error('a read connection needs a database file');
  return file;
}

const closers = new WeakMap<Db, Array<() => void | Promise<void>>>();

/**
 * Runs `fn` when `db` (a root Kysely instance) is destroyed, before its connection closes: what
 * is opened beside a connection (read connections, reader threads) closes with it, without the
 * code that owns the connection having to know about it. The last registered runs first.
 */
export function onDestroy(db: Db, fn: () => void | Promise<void>): void {
  let list = closers.get(db);
  if (!list) {
    const fns: Array<() => void | Promise<void>> = [];
    list = fns;
    closers.set(db, fns);
    const destroy = db.destroy.bind(db);
    db.destroy = async () => {
      for (const f of fns.splice(0).reverse()) await f();
      await destroy();
    };
  }
  list.push(fn);
}

const readers = new WeakMap<Db, Reader | Promise<Reader>>();

/**
 * The read connection beside `db` (the root Kysely instance, not a transaction), opened on first
 * use and closed with `db`: the reader itself once open, a promise of it the first time.
 */
export function readerOf(db: Db): Reader | Promise<Reader> {
  let r = readers.get(db);
  if (!r) {
    const opening = databaseFileOf(db).then((file) => {
      const reader = openReader(file);
      readers.set(db, reader);
      onDestroy(db, () => reader.close());
      return reader;
    }, (err) => { readers.delete(db); throw err; });
    readers.set(db, opening);
    r = opening;
  }
  return r;
}
