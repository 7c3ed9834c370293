/** Debian's bogofilter on the same folds (scripts/bench/spam.ts): trained and asked in bulk mode, one process per step. */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes each message as a file of `dir` once; answers the paths by index. */
export function writeMessages(dir: string, raws: string[]): string[] {
  mkdirSync(dir, { recursive: true });
  return raws.map((raw, i) => {
    const file = join(dir, String(i));
    writeFileSync(file, raw);
    return file;
  });
}

/** Runs bogofilter with these arguments over files, in chunks (argument lists have a limit). */
function bulk(args: string[], files: string[]): string {
  let out = '';
  for (let i = 0; i < files.length; i += 500) {
    const r = spawnSync('bogofilter', [...args, '-B', ...files.slice(i, i + 500)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (r.error) throw r.error;
    out += r.stdout;
  }
  return out;
}

/** Trains a fresh word list in `dbDir` and answers whether bogofilter calls each test file spam (S). */
export function bogofilterFold(dbDir: string, train: { spam: string[]; ham: string[] }, test: string[]): boolean[] {
  mkdirSync(dbDir, { recursive: true });
  bulk(['-d', dbDir, '-s'], train.spam);
  bulk(['-d', dbDir, '-n'], train.ham);
  const lines = bulk(['-d', dbDir, '-t'], test).trim().split('\n');
  return lines.map((l) => l.startsWith('S'));
}

export const bogofilterVersion = (): string => execFileSync('bogofilter', ['-V'], { encoding: 'utf8' }).split('\n')[0].trim();
