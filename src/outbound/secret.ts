import { hkdfSync } from 'node:crypto';

/**
 * The per-install SRS key (DECISIONS.md section 12), derived with HKDF from the install secret
 * (src/install-secret.ts: the data directory's `install.secret`, which backups already keep, or the
 * database's on PostgreSQL, shared by every node), so SRS addresses handed out before a restart or a
 * restore, or by another node, still verify, and no key serves two purposes.
 */
export function srsKey(installSecret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', installSecret, Buffer.alloc(0), 'mailstead srs v1', 32));
}
