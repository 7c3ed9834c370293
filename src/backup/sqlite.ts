import { copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, closeSync, readSync, renameSync, rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { databaseFile } from '../db/connection.js';

/** Thrown when the restore would overwrite a database without --force, or one a server has open. */
export class RefusedRestoreError extends Error {}

const SQLITE_MAGIC = 'SQLite format 3\u0000';

/** Checks that `file` is a whole SQLite database of Mailstead's; throws saying what it is not. */
function checkBackup(file: string): void {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    readSync(fd, head, 0, head.length, 0);
    if (head.toString('latin1') !== SQLITE_MAGIC) throw new RefusedRestoreError(`${file} is not a SQLite database (a PostgreSQL backup restores with MAILSTEAD_DATABASE_URL set)`);
  } finally {
    closeSync(fd);
  }
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new RefusedRestoreError(`${file} is damaged: ${String(check)}`);
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tenants'").get()) {
      throw new RefusedRestoreError(`${file} is not a Mailstead database (it has no tenants table)`);
    }
  } finally {
    db.close();
  }
}

/**
 * Takes the database of a data dir for the restore: refused while anything has it open (a
 * running server keeps connections open: an exclusive lock cannot be had), and its WAL is copied
 * into it and emptied, so no stale WAL is left beside the restored file.
 */
function takeOver(target: string): void {
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(target, { fileMustExist: true, timeout: 0 });
  } catch (err) {
    throw new RefusedRestoreError(`cannot open ${target}: ${(err as Error).message}`);
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
      throw new RefusedRestoreError(`${target} is in use: stop the server (and every other Mailstead process on this data dir) before restoring`);
    }
    throw err;
  } finally {
    db.close();
  }
}

/**
 * Restores a SQLite backup (`mailstead backup FILE`) as the database of `dataDir`, which may be
 * new. An existing database is replaced only with `force`, and never while a server runs on it.
 * The copy is written beside the database, flushed and renamed over it, so a crash leaves either
 * database whole. Returns the database file.
 */
export function restoreSqlite(dataDir: string, file: string, force: boolean): string {
  checkBackup(file);
  mkdirSync(dataDir, { recursive: true });
  const target = databaseFile(dataDir);
  if (existsSync(target)) {
    if (!force) throw new RefusedRestoreError(`${target} exists; pass --force to replace it (stop the server first)`);
    takeOver(target);
  }
  const partial = `${target}.restoring`;
  try {
    copyFileSync(file, partial);
    const fd = openSync(partial, 'r+');
    try { fsyncSync(fd); } finally { closeSync(fd); }
    renameSync(partial, target);
  } finally {
    rmSync(partial, { force: true });
  }
  for (const suffix of ['-wal', '-shm']) rmSync(target + suffix, { force: true });
  const dir = openSync(dataDir, 'r');
  try { fsyncSync(dir); } finally { closeSync(dir); }
  return target;
}
