import type { Config } from '../config.js';
import { openDatabase, type ConnectionOptions, type Database_ } from './connection.js';
import { openPostgresDatabase, type PostgresDatabase } from './postgres.js';
import { postgresBackend, sqliteBackend, type Backend } from './backend.js';

/** An open database of either backend; `backend` tells which (db/backend.ts). */
export type AnyDatabase = Database_ | PostgresDatabase;

/** Options of openConfiguredDatabase; the SQLite ones apply to SQLite only. */
export type OpenOptions = Omit<ConnectionOptions, 'cacheMb'> & { onCheckpointError?(err: unknown): void; onIdleError?(err: Error): void; onQueryError?(err: unknown, sql: string): void };

/**
 * The database the configuration names: PostgreSQL when MAILSTEAD_DATABASE_URL is set
 * (DECISIONS.md section 17), else SQLite in the data directory, exactly as before. This is where
 * the backend is decided: the result carries it (`backend`), and so does its Kysely handle
 * (`backendOf(db)`), for the whole life of the process.
 */
export function openConfiguredDatabase(config: Pick<Config, 'dataDir' | 'databaseUrl'>, opts: OpenOptions = {}): Promise<AnyDatabase> {
  if (config.databaseUrl) return openPostgresDatabase(config.databaseUrl, { onIdleError: opts.onIdleError, onQueryError: opts.onQueryError });
  return openDatabase(config.dataDir, opts);
}

/** The backend the configuration names, before anything is opened. */
export const configuredBackend = (config: Pick<Config, 'databaseUrl'>): Backend => (config.databaseUrl ? postgresBackend : sqliteBackend);

export { backendOf, dml, type Backend, type BackendKind } from './backend.js';
