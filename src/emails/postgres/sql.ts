import type pg from 'pg';
import { tsqueryTerms, type PgSearch } from './search.js';
import { LIST_COLUMNS, type ListFilter, type Position } from '../store.js';

/*
 * The SQL text of the hot reads on PostgreSQL (reads.ts), written as plain strings with
 * numbered parameters rather than through Kysely: a read is a handful of microseconds of SQL
 * building this way, its rows come back as arrays (the tuples reading.ts shapes), and a statement
 * of a given text is prepared once per connection (`run`), so PostgreSQL parses and plans it once.
 * Every value is a bound parameter; only the page size, a checked integer, is written into the text.
 */

/** The list columns as `e.<name>`, in LIST_COLUMNS' order. */
export const LIST = LIST_COLUMNS.join(', ');

/** Bound parameters of one statement: `add` binds a value and answers its placeholder. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** The WHERE of a list (tenant, live rows, the filters), without any position. */
export function filterWhere(f: ListFilter, p: Params): string {
  let w = `e.tenant_id = ${p.add(f.tenantId)}::bigint AND e.deleted_at IS NULL`;
  if (f.mailboxId !== undefined) w += ` AND e.mailbox_id = ${p.add(f.mailboxId)}::bigint`;
  if (f.folder !== undefined) w += ` AND e.folder = ${p.add(f.folder)}`;
  if (f.unread === true) w += ' AND e.read_at IS NULL';
  if (f.unread === false) w += ' AND e.read_at IS NOT NULL';
  if (f.since !== undefined) w += ` AND e.received_at >= ${p.add(f.since)}::bigint`;
  if (f.before !== undefined) w += ` AND e.received_at <= ${p.add(f.before)}::bigint`;
  return w;
}

/** Placeholders of a position's key, bound once and used by every condition on it. */
export interface Key { at: string; id: string }
export const keyOf = (pos: Position, p: Params): Key => ({ at: p.add(pos.receivedAt), id: p.add(pos.id) });

/**
 * Rows on one side of a key: a plain range on received_at (an index range) plus the tie-break on
 * id; `orEqual` takes the key's own row too.
 */
export function sideOf(side: 'below' | 'above', k: Key, orEqual = false, columns = { at: 'e.received_at', id: 'e.id' }): string {
  const at = `${k.at}::bigint`;
  const id = `${k.id}::bigint`;
  const [cmp, op] = side === 'below' ? ['<=', '<'] : ['>=', '>'];
  return `${columns.at} ${cmp} ${at} AND (${columns.at} ${op} ${at} OR ${columns.id} ${op}${orEqual ? '=' : ''} ${id})`;
}

/** Index order from a position outwards: newest first below it, oldest first above it. */
export const ORDER = {
  below: 'ORDER BY e.received_at DESC, e.id DESC',
  above: 'ORDER BY e.received_at ASC, e.id ASC',
};

/** The same order over the rows of a LATERAL page `p`, kept in the statement around it. */
export const OUTER_ORDER = {
  below: 'ORDER BY p.received_at DESC, p.id DESC',
  above: 'ORDER BY p.received_at ASC, p.id ASC',
};

/**
 * A count written into the text (a page size, a plan's bound): a checked integer, never input
 * text, so a plan sees its real LIMIT.
 */
export function limitOf(n: number, least = 1): string {
  if (!Number.isSafeInteger(n) || n < least) throw new RangeError(`bad limit ${n}`);
  return String(n);
}

/** The tsquery of a search as SQL text (postgres/search.ts tsqueryTerms), each word a bound parameter of `p`. */
export function tsqueryOf(s: PgSearch, p: Params): string {
  const parts = tsqueryTerms(s).map((t) => {
    if (t.prefix === undefined) return `phraseto_tsquery('simple', ${p.add(t.phrase)})`;
    const last = `to_tsquery('simple', ${p.add(t.prefix)})`;
    return t.phrase === undefined ? last : `(phraseto_tsquery('simple', ${p.add(t.phrase)}) <-> ${last})`;
  });
  return `(${parts.join(' && ')})`;
}

/** Where a statement runs: the pool, or one connection (a read transaction). */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/** Statement names by text: a name is the same on every connection, and each prepares it on first use. */
const names = new Map<string, string>();
/** Distinct texts that get a name; past it (filters combined in unusual ways) statements go unnamed. */
const MAX_NAMED = 2000;

/** The prepared statement name of `text` (null past MAX_NAMED texts). */
function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `mailstead_read_${names.size}`;
    names.set(text, name);
  }
  return name;
}

/** Runs `text` with the bound values of `p` and answers its rows as arrays in column order. */
export async function run(on: Queryable, text: string, p: Params): Promise<unknown[][]> {
  const r = await on.query({ text, values: p.values, rowMode: 'array', name: nameOf(text) });
  return r.rows as unknown[][];
}
