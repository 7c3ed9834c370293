import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import { backupPostgres, restorePostgres } from './backup/postgres.js';
import { restoreSqlite } from './backup/sqlite.js';
import { openConfiguredDatabase } from './db/open.js';
import { SET_ASIDE_USAGE, setAsideCommand } from './cli-set-aside.js';
import { createTenantService } from './tenants/service.js';
import { createTenantStore } from './tenants/store.js';
import { CliUsage, IMPORT_USAGE, importExportCommand } from './import/cli.js';

const USAGE = `usage:
  mailstead tenant create NAME [--plan active|none] [--admin]
  mailstead key create --tenant NAME --perms read,write,inbound,webhook
  mailstead key revoke KEY
  mailstead plan set NAME active|none
  mailstead backup FILE
  mailstead restore FILE [--force]
  ${SET_ASIDE_USAGE}
${IMPORT_USAGE}`;

/** A mistake in the command line: exit code 2. */
class UsageError extends Error {}

function usage(message: string): never {
  throw new UsageError(message);
}

function planValue(v: string | undefined): boolean {
  if (v === 'active') return true;
  if (v === 'none') return false;
  return usage(`plan must be "active" or "none", not ${JSON.stringify(v ?? '')}`);
}

/** The one FILE argument of backup or restore. */
function oneFile(command: string, args: Array<string | undefined>): string {
  if (args.length !== 1 || !args[0]) usage(`${command} takes exactly one FILE`);
  return args[0];
}

/** Where a backup goes: one FILE in a directory that exists, not a directory itself. */
function backupFile(args: Array<string | undefined>): string {
  const file = oneFile('backup', args);
  const folder = dirname(resolve(file));
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) usage(`backup: the directory ${folder} does not exist`);
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) usage(`backup: ${file} is a directory`);
  return file;
}

/** Runs one admin command against the data directory of MAILSTEAD_DATA_DIR; the server may be running. */
async function run(argv: string[]): Promise<string> {
  if (argv[0] === 'import' || argv[0] === 'export') {
    try {
      return await importExportCommand(argv, loadConfig());
    } catch (err) {
      if (err instanceof CliUsage) usage(err.message);
      throw err;
    }
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: { plan: { type: 'string' }, admin: { type: 'boolean' }, tenant: { type: 'string' }, perms: { type: 'string' }, force: { type: 'boolean' } },
    });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { positionals: [noun, verb, ...rest], values } = parsed;
  const fileCommand = noun === 'backup' || noun === 'restore';
  const command = `${noun ?? ''} ${fileCommand ? '' : verb ?? ''}`.trim();
  const known = ['tenant create', 'key create', 'key revoke', 'plan set', 'backup', 'restore', 'set-aside list', 'set-aside retry', 'set-aside discard'];
  if (!known.includes(command)) usage(noun ? `unknown command "${[noun, verb].filter(Boolean).join(' ')}"` : 'no command given');
  if (values.force && command !== 'restore') usage('--force is an option of restore only');

  const config = loadConfig();
  if (command === 'restore') {
    const file = oneFile('restore', [verb, ...rest]);
    if (!statSync(file, { throwIfNoEntry: false })?.isFile()) usage(`restore: ${file} is not a file`);
    // Before any connection: opening the database would create and migrate it.
    if (!config.databaseUrl) return restoreSqlite(config.dataDir, file, values.force ?? false);
    await restorePostgres(config.databaseUrl, file, values.force ?? false);
    return 'restored';
  }
  if (command === 'backup' && config.databaseUrl) {
    // PostgreSQL: pg_dump's one snapshot of the whole database, taken while the server runs.
    const file = backupFile([verb, ...rest]);
    await backupPostgres(config.databaseUrl, file);
    return file;
  }
  // The server's database: SQLite in the data dir, or PostgreSQL at MAILSTEAD_DATABASE_URL.
  const database = await openConfiguredDatabase(config, { synchronous: 'FULL' });
  try {
    const tenants = createTenantService({ db: database.db, store: createTenantStore(), clock: systemClock, cooldownSeconds: config.cooldownSeconds });
    switch (command) {
      case 'set-aside list': case 'set-aside retry': case 'set-aside discard':
        return await setAsideCommand({ db: database.db, dataDir: config.dataDir, postgres: Boolean(config.databaseUrl), verb, args: rest, usage });
      case 'tenant create': {
        if (!verb || rest.length !== 1) usage('tenant create takes exactly one NAME');
        const name = rest[0];
        if (!/^[\w.@-]{1,64}$/.test(name)) usage('NAME must be 1-64 letters, digits or ._@-');
        const plan = values.plan === undefined ? false : planValue(values.plan);
        try {
          return String(await tenants.createTenant(name, { plan, admin: values.admin ?? false }));
        } catch (err) {
          return usage((err as Error).message);
        }
      }
      case 'key create': {
        if (rest.length) usage('key create takes no positional arguments');
        if (!values.tenant) usage('--tenant NAME is required');
        if (!values.perms) usage('--perms is required (read,write,inbound,webhook)');
        try {
          return await tenants.createKey(values.tenant, values.perms);
        } catch (err) {
          return usage((err as Error).message);
        }
      }
      case 'key revoke': {
        if (rest.length !== 1) usage('key revoke takes exactly one KEY');
        try {
          await tenants.revokeKey(rest[0]);
        } catch (err) {
          return usage((err as Error).message);
        }
        return 'revoked';
      }
      case 'plan set': {
        if (rest.length !== 2) usage('plan set takes NAME and active|none');
        try {
          await tenants.setPlan(rest[0], planValue(rest[1]));
        } catch (err) {
          if (err instanceof UsageError) throw err;
          return usage((err as Error).message);
        }
        return rest[1];
      }
      default: {
        const file = backupFile([verb, ...rest]);
        if (database.dialect !== 'sqlite') throw new Error('unreachable: PostgreSQL backups are taken above');
        await database.sqlite.backup(file);
        return file;
      }
    }
  } finally {
    await database.close();
  }
}

run(process.argv.slice(2)).then(
  (out) => { process.stdout.write(out + '\n'); },
  (err) => {
    if (err instanceof UsageError) {
      process.stderr.write(`mailstead: ${err.message}\n${USAGE}\n`);
      process.exit(2);
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`mailstead: configuration error: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`mailstead: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
