import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The file in the data directory that keeps the per-install SRS key. */
export const SRS_SECRET_FILE = 'srs.key';

/**
 * The per-install SRS key (DECISIONS.md section 12): 32 random bytes made at first start and kept
 * in the data directory, so addresses handed out before a restart still verify after it. Written
 * to a temporary file, fsynced and renamed, so a crash never leaves half a key.
 */
export function loadSrsSecret(dataDir: string): Buffer {
  const file = join(dataDir, SRS_SECRET_FILE);
  try {
    const hex = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{64}$/.test(hex)) return Buffer.from(hex, 'hex');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, key.toString('hex') + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  return key;
}
