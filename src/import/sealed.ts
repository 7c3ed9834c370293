import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** The key that seals import passwords, derived from the install secret for this use only. */
const keyOf = (secret: Buffer) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'mailstead import source password', 32));

/**
 * Seals a source password for the while an import task is unfinished (AES-256-GCM under a key
 * derived from the install secret): a restart can resume the task, and a copy of the database
 * alone does not give the password away. The task deletes it when it ends.
 */
export function seal(secret: Buffer, password: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const body = Buffer.concat([c.update(password, 'utf8'), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
}

/** The password `seal` sealed; throws when it was sealed under another secret or altered. */
export function unseal(secret: Buffer, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64');
  const d = createDecipheriv('aes-256-gcm', keyOf(secret), raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
}
