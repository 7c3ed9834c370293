import BetterSqlite3 from 'better-sqlite3';

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

/**
 * Opens a read-only connection to a database file (which must exist). `cacheKb` is its page cache:
 * 8 MB for the read paths; a parser thread, which reads each queued message once, asks for less.
 */
export function openReader(file: string, { cacheKb = 8192 }: { cacheKb?: number } = {}): Reader {
  const sqlite = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma(`cache_size = -${cacheKb}`);
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
