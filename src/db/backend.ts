import { PostgresAdapter, type DialectAdapter, type Kysely } from 'kysely';
import { postgresDml, sqliteDml, type Dml } from './dml.js';

/** The two databases Mailstead runs on (DECISIONS.md section 17). */
export type BackendKind = 'sqlite' | 'postgres';

/**
 * The database a process runs on, decided once in db/open.ts and carried with every connection
 * opened there (and with every transaction on it). Wiring chooses each capability's
 * implementation from it once (`choose`); the small SQL differences go through `dml`.
 */
export interface Backend {
  readonly kind: BackendKind;
  /** The SQL fragments that differ between the two databases (dml.ts). */
  readonly dml: Dml;
  /** The implementation of a capability for this backend, e.g. `backend.choose({ sqlite: a, postgres: b })`. */
  choose<T>(impls: { readonly sqlite: T; readonly postgres: T }): T;
}

function makeBackend(kind: BackendKind): Backend {
  return Object.freeze({ kind, dml: kind === 'postgres' ? postgresDml : sqliteDml, choose: <T>(impls: { sqlite: T; postgres: T }) => impls[kind] });
}

/** SQLite in the data directory (the default). */
export const sqliteBackend: Backend = makeBackend('sqlite');
/** PostgreSQL at MAILSTEAD_DATABASE_URL. */
export const postgresBackend: Backend = makeBackend('postgres');

/** The backend of a kind. */
export const backendFor = (kind: BackendKind): Backend => (kind === 'postgres' ? postgresBackend : sqliteBackend);

/**
 * The tag set at open time. Keyed by the Kysely handle's adapter: Kysely hands the same adapter
 * object to every transaction it starts (and to the transaction the migrator gives a migration),
 * so the tag travels with the connection without a lookup per query.
 */
const tags = new WeakMap<DialectAdapter, Backend>();

/** Tags a Kysely handle just opened with its backend (db/connection.ts, db/postgres.ts). */
export function tagBackend(db: Kysely<any>, backend: Backend): void {
  tags.set(db.getExecutor().adapter, backend);
}

/**
 * The backend of a Kysely handle or transaction, as tagged when it was opened. A handle built
 * elsewhere (a test's own Kysely over a bare driver) has no tag; it is classified once by its
 * adapter's class and tagged, so every later call is the same map lookup.
 */
export function backendOf(db: Kysely<any>): Backend {
  const adapter = db.getExecutor().adapter;
  let backend = tags.get(adapter);
  if (!backend) {
    backend = adapter instanceof PostgresAdapter ? postgresBackend : sqliteBackend;
    tags.set(adapter, backend);
  }
  return backend;
}

/** The SQL differences of `db`'s backend: `dml(db).greatest(a, b)`. */
export const dml = (db: Kysely<any>): Dml => backendOf(db).dml;
