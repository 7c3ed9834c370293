import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { AnyDatabase } from './db/open.js';
import type { Logger } from './logger.js';

const HEX_SECRET = /^[0-9a-f]{64}$/;

/**
 * The per-install secret (32 random bytes): attachment links and SRS addresses derive their keys
 * from it with HKDF, so no key is ever used for two things. With SQLite it is `install.secret` in
 * the data directory, created at first start (mode 0600), kept by backups beside the database.
 */
export function fileInstallSecret(dataDir: string): Buffer {
  const file = join(dataDir, 'install.secret');
  if (!existsSync(file)) {
    try {
      writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const hex = readFileSync(file, 'utf8').trim();
  if (!HEX_SECRET.test(hex)) throw new Error(`${file} is not a 64-hex-digit secret`);
  return Buffer.from(hex, 'hex');
}

/** A secret an operator put in the data directory, without creating one. */
function existingFileSecret(dataDir: string): string | null {
  const file = join(dataDir, 'install.secret');
  if (!existsSync(file)) return null;
  const hex = readFileSync(file, 'utf8').trim();
  if (!HEX_SECRET.test(hex)) throw new Error(`${file} is not a 64-hex-digit secret`);
  return hex;
}

/**
 * The install secret of this database. On PostgreSQL the nodes share nothing but the database
 * (DECISIONS.md section 17), so it lives there (`install_secret`, migration 016): an SRS address
 * one node handed out verifies on the others, and so does an attachment link. The first node to
 * start writes it: the secret of its data directory if an operator put one there (so links and SRS
 * addresses of an install moved from a single node keep working), else a random one.
 */
export async function loadInstallSecret(database: AnyDatabase, dataDir: string, logger: Logger): Promise<Buffer> {
  if (database.dialect === 'sqlite') return fileInstallSecret(dataDir);
  const own = existingFileSecret(dataDir);
  await sql`INSERT INTO install_secret (id, secret) VALUES (1, ${own ?? randomBytes(32).toString('hex')}) ON CONFLICT (id) DO NOTHING`.execute(database.db);
  const { rows } = await sql<{ secret: string }>`SELECT secret FROM install_secret WHERE id = 1`.execute(database.db);
  const secret = Buffer.from(rows[0].secret, 'hex');
  if (own && !timingSafeEqual(secret, Buffer.from(own, 'hex'))) {
    logger.warn('install.secret in the data directory differs from the database\'s: the database\'s is used, as by every node');
  }
  return secret;
}
