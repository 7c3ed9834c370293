import { sql, type Expression, type RawBuilder, type SelectQueryBuilder } from 'kysely';

/** An SQL expression or a value bound as a parameter. */
type Operand = Expression<unknown> | string | number;

/** A value goes in as a parameter; an expression (a column ref, a fragment) as itself. */
const operand = (x: Operand) => (typeof x === 'object' ? x : sql.val(x));

/**
 * The small differences between SQLite's and PostgreSQL's SQL, as fragments for `sql` templates
 * and query builders, so a query is written once for both (the schema's differences are ddl(),
 * dialect.ts). Each renders on SQLite exactly the text the queries had before.
 */
export interface Dml {
  /** The larger of two values: SQLite's scalar max(), PostgreSQL's greatest(). */
  greatest(a: Operand, b: Operand): RawBuilder<number>;
  /** The bytes or text of `value` from 1-based position `from` on. */
  tail(value: Operand, from: number): RawBuilder<unknown>;
  /** Whether `needle` occurs in `haystack` (instr / strpos). */
  contains(haystack: Operand, needle: Operand): RawBuilder<boolean>;
  /** The rows where `condition` holds, counted in an aggregate: count(*) FILTER (WHERE ...) / sum(...). */
  countWhere(condition: Expression<unknown>): RawBuilder<number>;
  /** `value LIKE pattern` ignoring ASCII case (SQLite's LIKE does; PostgreSQL's ILIKE), with `\` escaping. */
  likeAnyCase(value: Operand, pattern: string): RawBuilder<boolean>;
  /**
   * A list for `IN`, one parameter whatever its length (a statement per length would be prepared
   * anew and cached each): SQLite unpacks JSON with json_each, PostgreSQL unnests an array
   * typed like the column it is compared with (numbers as bigint, strings as text).
   */
  list<T extends number | string>(values: readonly T[]): RawBuilder<T>;
  /**
   * A table of integer rows as one parameter (a column each on PostgreSQL), its columns named
   * c0, c1, ...: the source of an INSERT ... SELECT of many rows in one statement (json_each / unnest).
   */
  intRows(rows: ReadonlyArray<readonly number[]>, width: number): RawBuilder<unknown>;
  /** Whether the JSON array of strings in a text column lists `value` (json_each / jsonb_array_elements_text). */
  jsonArrayIncludes(column: Expression<unknown>, value: string): RawBuilder<boolean>;
  /**
   * A claiming select: on PostgreSQL its rows stay locked until the transaction ends and rows
   * another node holds are skipped (FOR UPDATE SKIP LOCKED); a SQLite write transaction runs
   * alone, so nothing is added.
   */
  claim<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
}

/** The column names of intRows: c0, c1, ... */
const columns = (width: number) => Array.from({ length: width }, (_, i) => `c${i}`);

/** A JSON list for `IN`, unpacked by SQLite (also used by SQLite-only queries). */
export const jsonList = <T extends number | string>(values: readonly T[]): RawBuilder<T> =>
  sql<T>`(SELECT value FROM json_each(${JSON.stringify(values)}))`;

/** SQLite's fragments. */
export const sqliteDml: Dml = {
  greatest: (a, b) => sql<number>`MAX(${operand(a)}, ${operand(b)})`,
  tail: (value, from) => sql`substr(${operand(value)}, ${from})`,
  contains: (haystack, needle) => sql<boolean>`instr(${operand(haystack)}, ${operand(needle)}) > 0`,
  countWhere: (condition) => sql<number>`coalesce(sum(${condition}), 0)`,
  likeAnyCase: (value, pattern) => sql<boolean>`${operand(value)} LIKE ${pattern} ESCAPE '\\'`,
  list: jsonList,
  intRows: (rows, width) => sql`(SELECT ${sql.join(columns(width).map((c, i) => sql`value ->> ${sql.raw(String(i))} AS ${sql.ref(c)}`))} FROM json_each(${JSON.stringify(rows)}))`,
  jsonArrayIncludes: (column, value) => sql<boolean>`EXISTS (SELECT 1 FROM json_each(${column}) AS g WHERE g.value = ${value})`,
  claim: (query) => query,
};

/** PostgreSQL's fragments. */
export const postgresDml: Dml = {
  greatest: (a, b) => sql<number>`GREATEST(${operand(a)}, ${operand(b)})`,
  // Typed: `substring(text from text)` is the regular-expression form.
  tail: (value, from) => sql`substring(${operand(value)} from ${from}::integer)`,
  contains: (haystack, needle) => sql<boolean>`strpos(${operand(haystack)}, ${operand(needle)}) > 0`,
  countWhere: (condition) => sql<number>`count(*) FILTER (WHERE ${condition})`,
  likeAnyCase: (value, pattern) => sql<boolean>`${operand(value)} ILIKE ${pattern} ESCAPE '\\'`,
  list: <T extends number | string>(values: readonly T[]) => {
    const numeric = values.length > 0 && typeof values[0] === 'number';
    return numeric ? sql<T>`(SELECT unnest(${values}::bigint[]))` : sql<T>`(SELECT unnest(${values}::text[]))`;
  },
  intRows: (rows, width) => sql`(SELECT * FROM unnest(${sql.join(columns(width).map((_, i) => sql`${rows.map((r) => r[i])}::bigint[]`))}) AS u(${sql.join(columns(width).map((c) => sql.ref(c)))}))`,
  jsonArrayIncludes: (column, value) => sql<boolean>`EXISTS (SELECT 1 FROM jsonb_array_elements_text(${column}::jsonb) AS g(value) WHERE g.value = ${value})`,
  claim: (query) => query.forUpdate().skipLocked(),
};
