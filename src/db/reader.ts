import { sql } from 'kysely';
import type { Db } from './connection.js';
import { openReader, type Reader } from './read-connection.js';

// The connection itself lives in read-connection.ts, free of Kysely, so threads that only read a
// row or two (parser threads) do not load it; the helpers here tie one to a Kysely connection.
export { openReader, type Reader };

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
      // 2 MB: this connection answers reads only until reader threads start (read-pool.ts), at a
      // few hundred a second at most; the OS page cache holds the rest.
      const reader = openReader(file, { cacheKb: 2048 });
      readers.set(db, reader);
      onDestroy(db, () => reader.close());
      return reader;
    }, (err) => { readers.delete(db); throw err; });
    readers.set(db, opening);
    r = opening;
  }
  return r;
}
