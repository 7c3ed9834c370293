import type { Config } from '../config.js';
import { openDatabase, type ConnectionOptions, type Database_ } from './connection.js';
import { openPostgresDatabase, type PostgresDatabase } from './postgres.js';

/** An open database of either dialect; `dialect` tells which. */
export type AnyDatabase = Database_ | PostgresDatabase;

/** Options of openConfiguredDatabase; the SQLite ones apply to SQLite only. */
export type OpenOptions = Omit<ConnectionOptions, 'cacheMb'> & { onCheckpointError?(err: unknown): void; onIdleError?(err: Error): void; onQueryError?(err: unknown, sql: string): void };

/**
 * The database the configuration names: PostgreSQL when MAILSTEAD_DATABASE_URL is set
 * (DECISIONS.md section 17), else SQLite in the data directory, exactly as before.
 */
export function openConfiguredDatabase(config: Pick<Config, 'dataDir' | 'databaseUrl'>, opts: OpenOptions = {}): Promise<AnyDatabase> {
  if (config.databaseUrl) return openPostgresDatabase(config.databaseUrl, { onIdleError: opts.onIdleError, onQueryError: opts.onQueryError });
  return openDatabase(config.dataDir, opts);
}
