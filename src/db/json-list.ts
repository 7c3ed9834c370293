import { sql, type Kysely, type RawBuilder } from 'kysely';
import { dialectOf } from './dialect.js';

/**
 * A list for `IN`, passed as one JSON parameter and unpacked by SQLite: the statement is the same
 * whatever the list's length. A placeholder per element makes a statement per length, which the
 * connections' statement cache prepares anew and then keeps with its compiled program.
 */
export const jsonList = <T extends number | string>(values: readonly T[]): RawBuilder<T> =>
  sql<T>`(SELECT value FROM json_each(${JSON.stringify(values)}))`;

/**
 * `jsonList` on either dialect, for stores that run on both: SQLite gets the JSON parameter;
 * PostgreSQL one array parameter (node-postgres sends a JS array as an array literal) unnested
 * and typed like the column it is compared with.
 */
export function listOf<T extends number | string>(db: Kysely<any>, values: readonly T[]): RawBuilder<T> {
  if (dialectOf(db) === 'sqlite') return jsonList(values);
  const numeric = values.length > 0 && typeof values[0] === 'number';
  return numeric ? sql<T>`(SELECT unnest(${values}::bigint[]))` : sql<T>`(SELECT unnest(${values}::text[]))`;
}
