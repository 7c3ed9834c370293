import type { Context } from 'koa';

/** Variant A: the key from `Authorization: Bearer` or `X-Api-Key`. */
export function headerKey(ctx: Context): string | null {
  const auth = ctx.get('authorization');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  if (m) return m[1];
  const header = ctx.get('x-api-key').trim();
  return header || null;
}

/**
 * Legacy variant B (DECISIONS.md section 11): the key is `key` in the JSON body of a POST and the
 * query parameter `key` of a GET. Headers are not read, so a header key alone is no key at all.
 */
export function legacyKey(ctx: Context, body: unknown): string | null {
  if (ctx.method === 'GET' || ctx.method === 'HEAD') {
    const value = ctx.query.key;
    return typeof value === 'string' && value !== '' ? value : null;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const value = (body as Record<string, unknown>).key;
  return typeof value === 'string' && value !== '' ? value : null;
}
