import type { Context, Next } from 'koa';
import { loadAssets, webRoot, type Asset } from './assets.js';
import { chooseCoding, encoder, type Encoder } from './encodings.js';
import { DASHBOARD_HEADERS } from './headers.js';

/** Paths that belong to the server, never to the dashboard. */
const SERVER_PATHS = /^\/(api|metrics)(\/|$)|^\/\.well-known\//;

/** Whether an If-None-Match header names `etag` (a list, possibly weak tags, or `*`). */
function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * The dashboard (DECISIONS.md section 16): static files from `web/` at `/`, with the security
 * headers of headers.ts. It is a client of the public API like any other and holds no state; the
 * API under /api keeps its own headers, untouched by this middleware.
 * Text files go out brotli- or gzip-compressed when the request accepts it (encodings.ts); each
 * coding is its own representation with its own ETag, and every answer says it varies by
 * Accept-Encoding so caches keep them apart.
 */
export function dashboard(root: string = webRoot()) {
  const assets = loadAssets(root);
  const index = assets.get('/index.html');
  if (!index) throw new Error(`no index.html in ${root}`);
  const encoders = new Map<Asset, Encoder>([...assets.values()].map((a) => [a, encoder(a)]));

  return async (ctx: Context, next: Next) => {
    if (SERVER_PATHS.test(ctx.path)) return next();
    const asset: Asset | undefined = ctx.path === '/' ? index : assets.get(ctx.path);
    if (!asset) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      ctx.status = 405;
      ctx.body = { status: 'error', reason: 'Method not allowed' };
      return;
    }
    const enc = encoders.get(asset)!;
    const coding = enc.compressible ? chooseCoding((c) => ctx.acceptsEncodings(c)) : null;
    const compressed = coding ? enc.body(coding) : null;
    // The ETag names the bytes sent: a compressed form has its own (the file's hash and the coding).
    const etag = compressed ? `${asset.etag.slice(0, -1)}-${coding}"` : asset.etag;
    ctx.set(DASHBOARD_HEADERS);
    // The page itself is always revalidated so a new release shows at once; assets carry an ETag.
    ctx.set('Cache-Control', 'no-cache');
    if (enc.compressible) ctx.vary('Accept-Encoding');
    ctx.set('ETag', etag);
    if (matches(ctx.get('if-none-match'), etag)) { ctx.status = 304; return; }
    ctx.type = asset.type;
    if (compressed) ctx.set('Content-Encoding', coding!);
    ctx.body = compressed ?? asset.body;
  };
}
