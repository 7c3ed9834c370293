import { sql, type RawBuilder } from 'kysely';

/**
 * A list for `IN`, passed as one JSON parameter and unpacked by SQLite: the statement is the same
 * whatever the list's length. A placeholder per element makes a statement per length, which the
 * connections' statement cache prepares anew and then keeps with its compiled program.
 */
export const jsonList = <T extends number | string>(values: readonly T[]): RawBuilder<T> =>
  sql<T>`(SELECT value FROM json_each(${JSON.stringify(values)}))`;
