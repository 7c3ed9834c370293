import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import { openConfiguredDatabase } from './db/open.js';
import { createTenantService } from './tenants/service.js';
import { createTenantStore } from './tenants/store.js';
import { CliUsage, IMPORT_USAGE, importExportCommand } from './import/cli.js';

const USAGE = `usage:
  mailstead tenant create NAME [--plan active|none] [--admin]
  mailstead key create --tenant NAME --perms read,write,inbound,webhook
  mailstead key revoke KEY
  mailstead plan set NAME active|none
  mailstead backup FILE
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
      options: { plan: { type: 'string' }, admin: { type: 'boolean' }, tenant: { type: 'string' }, perms: { type: 'string' } },
    });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { positionals: [noun, verb, ...rest], values } = parsed;
  const command = `${noun ?? ''} ${noun === 'backup' ? '' : verb ?? ''}`.trim();
  const known = ['tenant create', 'key create', 'key revoke', 'plan set', 'backup'];
  if (!known.includes(command)) usage(noun ? `unknown command "${[noun, verb].filter(Boolean).join(' ')}"` : 'no command given');

  const config = loadConfig();
  // The server's database: SQLite in the data dir, or PostgreSQL at MAILSTEAD_DATABASE_URL.
  const database = await openConfiguredDatabase(config, { synchronous: 'FULL' });
  try {
    const tenants = createTenantService({ db: database.db, store: createTenantStore(), clock: systemClock, cooldownSeconds: config.cooldownSeconds });
    switch (command) {
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
        const file = [verb, ...rest];
        if (file.length !== 1 || !file[0]) usage('backup takes exactly one FILE');
        const folder = dirname(resolve(file[0]!));
        if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) usage(`backup: the directory ${folder} does not exist`);
        if (statSync(file[0]!, { throwIfNoEntry: false })?.isDirectory()) usage(`backup: ${file[0]} is a directory`);
        // PostgreSQL has its own tools for this (pg_dump, base backups with WAL archiving).
        if (database.dialect !== 'sqlite') usage('backup copies the SQLite database; on PostgreSQL use pg_dump');
        await database.sqlite.backup(file[0]!);
        return file[0]!;
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
