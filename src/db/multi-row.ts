import { CompiledQuery } from 'kysely';
import type { Db } from './connection.js';

/**
 * Row counts a multi-row statement is made for; any other count is sent as a sum of these. The
 * connections keep prepared statements by SQL text, and a statement per row count (up to 256 per
 * table, each holding its compiled program and registers) held ~13 MB of the storage thread's
 * memory, and cost a fresh prepare whenever a batch had a new size.
 */
const CHUNK_ROWS = [128, 32, 8, 2, 1] as const;

/** Splits `total` rows into statement-sized chunks, each no larger than `fits(start, rows)` allows. */
export function statementChunks(total: number, fits: (start: number, rows: number) => boolean = () => true): number[] {
  const out: number[] = [];
  for (let start = 0; start < total;) {
    const n = CHUNK_ROWS.find((c) => c <= total - start && (c === 1 || fits(start, c)))!;
    out.push(n);
    start += n;
  }
  return out;
}

/**
 * Multi-row INSERTs of a fixed column list, sent as ready SQL.
 *
 * Kysely builds, freezes and compiles a query tree for every `insertInto().values(rows)`: for a
 * storage batch of 256 emails that was ~35 us per message on the storage thread, plus the garbage
 * it left, for SQL that only differs in its row count. The text per row count is made once here
 * and the values go to the driver (whose statement cache prepares it once) as a flat list.
 * `maxBytes` (with `bytesOf`) bounds the bytes bound to one statement, which SQLite copies and
 * holds while it runs.
 */
export function multiRowInsert<Row>(head: string, columns: ReadonlyArray<keyof Row & string>, tail = '', limit?: { maxBytes: number; bytesOf(row: Row): number }) {
  const texts = new Map<number, string>();
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const text = (n: number) => {
    let t = texts.get(n);
    if (!t) {
      t = `${head} (${columns.join(', ')}) VALUES ${Array.from({ length: n }, () => tuple).join(', ')}${tail ? ` ${tail}` : ''}`;
      texts.set(n, t);
    }
    return t;
  };
  const fits = (rows: Row[]) => (start: number, n: number) => {
    if (!limit) return true;
    let bytes = 0;
    for (let i = start; i < start + n; i++) bytes += limit.bytesOf(rows[i]);
    return bytes <= limit.maxBytes;
  };
  return {
    /** Inserts the rows in as few statements as the chunk sizes allow; the result rows (for a RETURNING tail) come back. */
    async run<Out = unknown>(db: Db, rows: Row[]): Promise<Out[]> {
      const out: Out[] = [];
      let start = 0;
      for (const n of statementChunks(rows.length, fits(rows))) {
        const values: unknown[] = [];
        for (let i = start; i < start + n; i++) for (const c of columns) values.push(rows[i][c] ?? null);
        const result = await db.executeQuery<Out>(CompiledQuery.raw(text(n), values));
        for (const r of result.rows) out.push(r);
        start += n;
      }
      return out;
    },
  };
}
