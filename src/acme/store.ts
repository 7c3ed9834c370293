import { generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { validatePair, type CertificatePair } from '../tls/pair.js';
import { writeAtomically } from '../tls/self-signed.js';

/** Where ACME keeps its files in the data directory: account key, certificate chain and its key. */
export function acmePaths(dataDir: string): { dir: string; accountKey: string; cert: string; key: string } {
  const dir = join(dataDir, 'tls', 'acme');
  return { dir, accountKey: join(dir, 'account.key'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
}

async function ensureDir(dataDir: string): Promise<void> {
  await mkdir(join(dataDir, 'tls'), { recursive: true, mode: 0o700 });
  await mkdir(acmePaths(dataDir).dir, { recursive: true, mode: 0o700 });
}

/**
 * The ACME account key: the stored one, else a new ECDSA P-256 key (what certbot and lego make by
 * default; the CA knows the account by this key, so losing it means a new account, not lost mail).
 */
export async function loadOrCreateAccountKey(dataDir: string): Promise<{ key: Buffer; created: boolean }> {
  const path = acmePaths(dataDir).accountKey;
  const stored = await readFile(path).catch(() => null);
  if (stored && stored.length > 0) return { key: stored, created: false };
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const key = Buffer.from(privateKey.export({ type: 'pkcs8', format: 'pem' }));
  await ensureDir(dataDir);
  await writeAtomically(path, key, 0o600);
  return { key, created: true };
}

/** What a stored certificate is worth now. */
export type StoredCertificate =
  | { usable: true; pair: CertificatePair; validTo: number }
  | { usable: false; why: string };

/**
 * The stored certificate when it can serve `hostname` at `now` (a valid pair naming the hostname,
 * not expired). Whether it is due for renewal is the schedule's question, not this one.
 */
export async function loadCertificate(dataDir: string, hostname: string, now: number): Promise<StoredCertificate> {
  const paths = acmePaths(dataDir);
  const files = await Promise.all([readFile(paths.key), readFile(paths.cert)]).catch(() => null);
  if (!files) return { usable: false, why: 'none stored' };
  const pair = { key: files[0], cert: files[1] };
  let leaf;
  try {
    leaf = validatePair(pair).leaf;
  } catch (err) {
    return { usable: false, why: (err as Error).message };
  }
  if (leaf.checkHost(hostname, { subject: 'never' }) === undefined) return { usable: false, why: `made for another hostname (${leaf.subjectAltName ?? leaf.subject})` };
  const validTo = new Date(leaf.validTo).getTime();
  if (validTo <= now) return { usable: false, why: 'expired' };
  return { usable: true, pair, validTo };
}

/** Stores a new certificate: the key first (0600), so a crash in between leaves a mismatch that the next start ignores. */
export async function saveCertificate(dataDir: string, pair: CertificatePair): Promise<void> {
  const paths = acmePaths(dataDir);
  await ensureDir(dataDir);
  await writeAtomically(paths.key, pair.key, 0o600);
  await writeAtomically(paths.cert, pair.cert, 0o644);
}
