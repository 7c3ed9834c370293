import type { Middleware } from 'koa';

/** RFC 8555 section 8.3: the path of an HTTP-01 challenge, with its base64url token. */
const CHALLENGE_PATH = /^\/\.well-known\/acme-challenge\/([A-Za-z0-9_-]{1,256})$/;
const PREFIX = '/.well-known/acme-challenge/';

/**
 * The HTTP-01 responder: the tokens of the orders in progress and the key authorizations the CA
 * must read back. Served by the HTTP listener outside /api and without a key, because the CA
 * validates anonymously over plain HTTP on port 80 (which the operator maps to this listener).
 */
export function createChallengeResponder() {
  const tokens = new Map<string, string>();

  const middleware: Middleware = async (ctx, next) => {
    if (!ctx.path.startsWith(PREFIX)) return next();
    const match = CHALLENGE_PATH.exec(ctx.path);
    const keyAuthorization = match ? tokens.get(match[1]) : undefined;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      ctx.status = 405;
      ctx.body = { status: 'error', reason: 'method not allowed' };
      return;
    }
    if (keyAuthorization === undefined) {
      ctx.status = 404;
      ctx.body = { status: 'error', reason: 'unknown challenge token' };
      return;
    }
    // Section 8.3: the body is the key authorization, exactly; octet-stream keeps proxies from touching it.
    ctx.type = 'application/octet-stream';
    ctx.body = keyAuthorization;
  };

  return {
    middleware,
    /** Publishes the answer of a challenge until remove() (the order's end). */
    set(token: string, keyAuthorization: string) { tokens.set(token, keyAuthorization); },
    remove(token: string) { tokens.delete(token); },
    /** How many challenges are being answered now. */
    size: () => tokens.size,
  };
}
export type ChallengeResponder = ReturnType<typeof createChallengeResponder>;
