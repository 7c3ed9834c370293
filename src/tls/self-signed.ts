import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { validatePair, type CertificatePair } from './pair.js';

/**
 * Apple platforms refuse TLS server certificates valid for more than 825 days (iOS 13 / macOS 10.15
 * rules, which also hold for certificates a user trusts by hand), so the self-signed certificate
 * stays under that and is made again well before it runs out.
 */
export const SELF_SIGNED_DAYS = 820;
/** A stored certificate that ends within this margin is replaced at start (and by the daily check). */
export const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;
/** notBefore lies a little in the past so clients with a slow clock accept a fresh certificate. */
const BACKDATE_MS = 3600 * 1000;

/** Where the pair lives in the data directory. */
export function selfSignedPaths(dataDir: string): { dir: string; key: string; cert: string } {
  const dir = join(dataDir, 'tls');
  return { dir, key: join(dir, 'self-signed.key'), cert: join(dir, 'self-signed.crt') };
}

/**
 * The names a client on this machine may connect by: `localhost`, 127.0.0.1 and ::1 (a client
 * told to connect to 127.0.0.1 checks for that address, not for MAILSTEAD_HOSTNAME).
 */
const LOCAL_NAMES = [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] as const;

/**
 * A new self-signed certificate for `hostname`: RSA-2048 (the key every mail client accepts),
 * SHA-256, CN <hostname> and subjectAltName DNS:<hostname>, DNS:localhost, IP:127.0.0.1 and
 * IP:::1, extendedKeyUsage serverAuth, not a CA.
 */
export async function generateSelfSigned(hostname: string, now: number): Promise<CertificatePair> {
  const notBeforeDate = new Date(now - BACKDATE_MS);
  const notAfterDate = new Date(notBeforeDate.getTime() + SELF_SIGNED_DAYS * DAY_MS);
  const pems = await generate([{ name: 'commonName', value: hostname }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: hostname }, ...LOCAL_NAMES.filter((n) => !('value' in n) || n.value !== hostname)] },
    ],
  });
  return { key: Buffer.from(pems.private), cert: Buffer.from(pems.cert) };
}

/** Why a stored pair cannot be kept, or null when it can. */
function unusable(pair: CertificatePair, hostname: string, now: number): string | null {
  let leaf;
  try {
    leaf = validatePair(pair).leaf;
  } catch (err) {
    return (err as Error).message;
  }
  if (leaf.checkHost(hostname, { subject: 'never' }) === undefined) return `made for another hostname (${leaf.subjectAltName ?? leaf.subject})`;
  if (leaf.checkHost('localhost', { subject: 'never' }) === undefined || leaf.checkIP('127.0.0.1') === undefined || leaf.checkIP('::1') === undefined) {
    return 'does not name localhost, 127.0.0.1 and ::1';
  }
  if (new Date(leaf.validTo).getTime() - now < RENEW_BEFORE_MS) return 'expires within 30 days';
  return null;
}

/** Writes a file through a temporary name and a rename, so a crash never leaves half a PEM. */
export async function writeAtomically(path: string, data: Buffer, mode: number): Promise<void> {
  const tmp = `${path}.${randomUUID()}.tmp`;
  await writeFile(tmp, data, { mode });
  await chmod(tmp, mode); // writeFile's mode passes through the umask: state it exactly
  await rename(tmp, path);
}

/**
 * The self-signed pair of the data directory: the stored one when it still serves `hostname` and is
 * not about to expire, else a new one, stored (key 0600 in a 0700 directory) before it is returned.
 * `created` tells whether it was made now, and `why` the reason.
 */
export async function loadOrCreateSelfSigned(dataDir: string, hostname: string, now: number): Promise<{ pair: CertificatePair; created: boolean; why?: string }> {
  const paths = selfSignedPaths(dataDir);
  let why = 'none stored';
  const stored = await Promise.all([readFile(paths.key), readFile(paths.cert)]).catch(() => null);
  if (stored) {
    const pair = { key: stored[0], cert: stored[1] };
    const reason = unusable(pair, hostname, now);
    if (!reason) return { pair, created: false };
    why = reason;
  }
  const pair = await generateSelfSigned(hostname, now);
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  // The key first: a crash between the two writes leaves a mismatched pair, which the next start replaces.
  await writeAtomically(paths.key, pair.key, 0o600);
  await writeAtomically(paths.cert, pair.cert, 0o644);
  return { pair, created: true, why };
}
