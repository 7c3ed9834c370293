import { hkdfSync } from 'node:crypto';
import { installSecret } from '../emails/links.js';

/**
 * The per-install SRS key (DECISIONS.md section 12), derived with HKDF from the install secret of
 * the data directory (`install.secret`, which backups already keep), so SRS addresses handed out
 * before a restart or a restore still verify after it, and no key serves two purposes.
 */
export function loadSrsSecret(dataDir: string): Buffer {
  return Buffer.from(hkdfSync('sha256', installSecret(dataDir), Buffer.alloc(0), 'mailstead srs v1', 32));
}
