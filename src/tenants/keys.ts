import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The permissions a key may carry (SPEC.md Authentication). */
export const PERMISSIONS = ['read', 'write', 'inbound', 'webhook'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** A new API key: 32 characters [A-Za-z0-9] from the CSPRNG. */
export function generateApiKey(): string {
  let key = '';
  for (let i = 0; i < 32; i++) key += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return key;
}

/** Whether a presented value has the shape of a key at all (cheap refusal before any lookup). */
export const looksLikeApiKey = (value: string) => /^[A-Za-z0-9]{32}$/.test(value);

/** The stored form of a key: hex SHA-256. */
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Parses "read,write" into permissions; throws on an unknown one. */
export function parsePermissions(list: string): Permission[] {
  const perms = [...new Set(list.split(',').map((p) => p.trim()).filter(Boolean))];
  for (const p of perms) {
    if (!(PERMISSIONS as readonly string[]).includes(p)) throw new Error(`unknown permission "${p}" (expected ${PERMISSIONS.join(', ')})`);
  }
  return perms as Permission[];
}
