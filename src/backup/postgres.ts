import { openSync, readSync, closeSync, renameSync, rmSync } from 'node:fs';
import pg from 'pg';
import { connectionOf, requirePgTool, runTool } from './pg-tools.js';

/** The first bytes of pg_dump's custom format. */
const CUSTOM_MAGIC = 'PGDMP';

/**
 * A consistent backup of the PostgreSQL database at `url` into `file`: pg_dump takes one snapshot
 * of the whole database while the server keeps running (custom format, compressed, restored with
 * pg_restore). Written beside `file` first and renamed, so `file` is never half a dump.
 */
export async function backupPostgres(url: string, file: string): Promise<void> {
  const pgDump = requirePgTool('pg_dump');
  const { dbname, env } = connectionOf(url);
  const partial = `${file}.partial`;
  try {
    await runTool(pgDump, ['--format=custom', '--no-owner', '--no-privileges', `--file=${partial}`, `--dbname=${dbname}`], env);
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
}

/** Runs `fn` on a connection of its own to the database at `url`. */
async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'mailstead restore' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** How many tables the database holds outside PostgreSQL's own schemas. */
function tableCount(url: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: string }>(`
      SELECT count(*) AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND s.nspname NOT IN ('pg_catalog', 'information_schema') AND s.nspname NOT LIKE 'pg\\_toast%'`);
    return Number(rows[0]!.n);
  });
}

/** Whether `file` is in pg_dump's custom format (else it is taken for plain SQL). */
function isCustomFormat(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(CUSTOM_MAGIC.length);
    readSync(fd, head, 0, head.length, 0);
    return head.toString('latin1') === CUSTOM_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/** Thrown when the target database holds tables and no --force was given. */
export class NotEmptyError extends Error {}

/**
 * Restores a backup (pg_dump's custom format through pg_restore, or plain SQL through psql) into
 * the database at `url`, in one transaction: all of it or nothing. The database must hold no
 * tables, unless `force`, which first empties its `public` schema (where Mailstead keeps everything).
 */
export async function restorePostgres(url: string, file: string, force: boolean): Promise<void> {
  const custom = isCustomFormat(file);
  const tool = requirePgTool(custom ? 'pg_restore' : 'psql');
  const { dbname, env } = connectionOf(url);
  const tables = await tableCount(url);
  if (tables > 0 && !force) {
    throw new NotEmptyError(`the database at MAILSTEAD_DATABASE_URL is not empty (${tables} tables); restore into an empty database, or pass --force to replace what the backup holds`);
  }
  if (tables > 0) await withClient(url, (client) => client.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public'));
  if (custom) {
    await runTool(tool, ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${dbname}`, file], env);
  } else {
    await runTool(tool, ['--no-psqlrc', '--quiet', '--set=ON_ERROR_STOP=1', '--single-transaction', `--dbname=${dbname}`, `--file=${file}`], env);
  }
}
