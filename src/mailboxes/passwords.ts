import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Length of a generated password (DECISIONS.md section 5). */
export const GENERATED_PASSWORD_LENGTH = 24;
/** Shortest password a client may choose. */
export const MIN_PASSWORD_LENGTH = 8;
/** Longest password a client may choose (bounds the work of hashing it). */
export const MAX_PASSWORD_LENGTH = 256;

/** scrypt cost as log2(N), block size r and parallelism p. */
interface Cost { ln: number; r: number; p: number }

// A chosen password may be weak, so it gets the full memory-hard cost. A generated one carries 144
// random bits, where guessing is hopeless at any cost, so a lighter cost keeps a 100-mailbox bulk fast.
const CHOSEN: Cost = { ln: 15, r: 8, p: 1 };
const GENERATED: Cost = { ln: 12, r: 8, p: 1 };
const KEY_LENGTH = 32;

/** A new password of 24 characters from [A-Za-z0-9-_], each drawn uniformly from a CSPRNG. */
export function generatePassword(): string {
  // 64 symbols divide 256 evenly, so masking a random byte is unbiased.
  const bytes = randomBytes(GENERATED_PASSWORD_LENGTH);
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 63];
  return out;
}

function derive(password: string, salt: Buffer, cost: Cost): Promise<Buffer> {
  const N = 2 ** cost.ln;
  const options: ScryptOptions = { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/**
 * Hashes a password with scrypt into a self-describing string
 * `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt base64>$<hash base64>` (PHC style), so the cost can
 * change later without breaking stored hashes. `generated` selects the lighter cost.
 */
export async function hashPassword(password: string, { generated = false } = {}): Promise<string> {
  const cost = generated ? GENERATED : CHOSEN;
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return `$scrypt$ln=${cost.ln},r=${cost.r},p=${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const HASH_FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** Whether `password` matches a hash made by `hashPassword` (constant-time compare); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = HASH_FORMAT.exec(stored);
  if (!m) return false;
  const cost = { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (cost.ln < 1 || cost.ln > 20 || cost.r < 1 || cost.p < 1) return false;
  const expected = Buffer.from(m[5], 'base64');
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, Buffer.from(m[4], 'base64'), cost);
  return timingSafeEqual(key, expected);
}
