import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where Debian and Ubuntu install each PostgreSQL version's programs. */
const DEBIAN_ROOT = '/usr/lib/postgresql';

const runnable = (file: string) => {
  try { accessSync(file, constants.X_OK); return true; } catch { return false; }
};

/**
 * A PostgreSQL client program (pg_dump, pg_restore, psql): the first on PATH, else the newest of
 * /usr/lib/postgresql/<version>/bin; null when neither has it.
 */
export function findPgTool(name: string, where: { path?: string; root?: string } = {}): string | null {
  for (const dir of (where.path ?? process.env.PATH ?? '').split(delimiter)) {
    if (dir && runnable(join(dir, name))) return join(dir, name);
  }
  const root = where.root ?? DEBIAN_ROOT;
  let versions: string[] = [];
  try { versions = readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a)); } catch { /* none installed */ }
  for (const v of versions) if (runnable(join(root, v, 'bin', name))) return join(root, v, 'bin', name);
  return null;
}

/** The program, or an error that names it and where it was looked for (`where` as findPgTool's). */
export function requirePgTool(name: string, where: { path?: string; root?: string } = {}): string {
  const found = findPgTool(name, where);
  if (!found) {
    throw new Error(`${name} was not found on PATH nor in ${where.root ?? DEBIAN_ROOT}/*/bin; install the PostgreSQL client programs `
      + `(e.g. the postgresql-client package) of the server's major version or newer`);
  }
  return found;
}

/**
 * How a client program reaches the database of a connection URL: the URL without its password
 * (command lines are visible to every user of the machine), and the password in PGPASSWORD.
 */
export function connectionOf(url: string): { dbname: string; env: NodeJS.ProcessEnv; database: string } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = '';
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (password) env.PGPASSWORD = password;
  return { dbname: u.toString(), env, database: decodeURIComponent(u.pathname.slice(1)) };
}

/** Runs a program to its end; rejects with its own words (stderr) when it fails. */
export function runTool(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      if (!err) { resolve(); return; }
      const words = String(stderr).trim().split('\n').slice(-8).join('\n');
      reject(new Error(`${file.split('/').pop()} failed: ${words || err.message}`));
    });
  });
}
