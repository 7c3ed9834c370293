import type { Context, Next } from 'koa';
import { loadAssets, webRoot, type Asset } from './assets.js';
import { DASHBOARD_HEADERS } from './headers.js';

/** Paths that belong to the server, never to the dashboard. */
const SERVER_PATHS = /^\/(api|metrics)(\/|$)|^\/\.well-known\//;

/**
 * The dashboard (DECISIONS.md section 16): static files from `web/` at `/`, with the security
 * headers of headers.ts. It is a client of the public API like any other and holds no state; the
 * API under /api keeps its own headers, untouched by this middleware.
 */
export function dashboard(root: string = webRoot()) {
  const assets = loadAssets(root);
  const index = assets.get('/index.html');
  if (!index) throw new Error(`no index.html in ${root}`);

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
    ctx.set(DASHBOARD_HEADERS);
    // The page itself is always revalidated so a new release shows at once; assets carry an ETag.
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', asset.etag);
    if (ctx.get('if-none-match') === asset.etag) { ctx.status = 304; return; }
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}
