import type { Context, Next } from 'koa';
import { Router } from '@koa/router';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { forbidden, tooManyRequests, unauthorized } from '../errors.js';
import type { Permission } from '../tenants/keys.js';
import type { ApiKey, TenantService } from '../tenants/service.js';
import { readJsonBody } from './body.js';
import { createRateLimiter } from './rate-limit.js';
import { compileBody, compileText, type JsonSchema } from './validate.js';

type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';

/** What a handler receives: the caller and the validated input. */
export interface RouteInput<B, Q, P> {
  key: ApiKey;
  body: B;
  query: Q;
  params: P;
}

/** One API operation, declared as data: the router and the OpenAPI description are built from it. */
export interface RouteSpec<B = any, Q = any, P = any> {
  method: Method;
  /** Path below /api in OpenAPI form, e.g. /v1/emails/{email}. */
  path: string;
  summary: string;
  /** Permission needed; `false` for a public route without a key. */
  permission: Permission | false;
  /** Needs an active plan (administrators exempt). */
  plan?: boolean;
  /** Which token bucket applies; public routes have none. */
  rateLimit?: 'api' | 'inbound';
  /** Largest accepted JSON body in bytes (default 1 MiB). */
  bodyLimit?: number;
  body?: JsonSchema;
  query?: JsonSchema;
  params?: JsonSchema;
  /** The handler itself waits for durability before it returns (so the registry need not). */
  durableByHandler?: boolean;
  /** Status codes this operation may answer besides 200, for the description. */
  errors?: number[];
  handler(ctx: Context, input: RouteInput<B, Q, P>): unknown | Promise<unknown>;
}

const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Reads the key from `Authorization: Bearer` or `X-Api-Key`. */
function presentedKey(ctx: Context): string | null {
  const auth = ctx.get('authorization');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  if (m) return m[1];
  const header = ctx.get('x-api-key').trim();
  return header || null;
}

/**
 * The route registry: capabilities add their operations here; it mounts them on a Koa router with
 * authentication, permission and plan guards, rate limits, body parsing and validation, and keeps
 * them for the OpenAPI description, so the schemas that validate are the schemas published.
 */
export function createRouteRegistry({ tenants, config, clock, durable }: { tenants: TenantService; config: Config; clock: Clock; durable: () => Promise<void> }) {
  const router = new Router({ prefix: '/api' });
  const specs: RouteSpec[] = [];
  const limiters = {
    api: createRateLimiter(config.rateLimit, clock),
    inbound: createRateLimiter(config.inboundRateLimit, clock),
  };

  function add<B = any, Q = any, P = any>(spec: RouteSpec<B, Q, P>): void {
    specs.push(spec as RouteSpec);
    const body = spec.body ? compileBody(spec.body) : null;
    const query = spec.query ? compileText(spec.query, 'Query') : null;
    const params = spec.params ? compileText(spec.params, 'Path') : null;
    const limiter = spec.permission === false ? null : limiters[spec.rateLimit ?? 'api'];
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');

    router[spec.method](koaPath, async (ctx: Context, _next: Next) => {
      let key = null as unknown as ApiKey;
      if (spec.permission !== false) {
        const presented = presentedKey(ctx);
        const found = presented ? await tenants.authenticate(presented) : null;
        if (!found) throw unauthorized();
        key = found;
        ctx.state.keyId = key.id;
        if (!key.perms.has(spec.permission)) throw forbidden(`API key lacks the "${spec.permission}" permission`);
        if (spec.plan && !key.planActive && !key.isAdmin) throw forbidden('No active pricing plan');
        const wait = limiter!(key.id);
        if (wait > 0) throw tooManyRequests('Rate limit exceeded', wait);
      }
      const input = { key, body: undefined as unknown, query: { ...ctx.query } as Record<string, unknown>, params: { ...ctx.params } as Record<string, unknown> };
      if (params) params(input.params);
      if (query) query(input.query);
      if (body) {
        input.body = await readJsonBody(ctx, spec.bodyLimit ?? DEFAULT_BODY_LIMIT);
        if (input.body === undefined) input.body = {};
        body(input.body);
      }
      await spec.handler(ctx, input as RouteInput<B, Q, P>);
      // Whatever a successful change committed is on disk before the client hears of it.
      if (spec.method !== 'get' && !spec.durableByHandler && ctx.status < 400) await durable();
    });
  }

  return {
    add,
    router,
    /** Every operation added so far (for the OpenAPI description). */
    specs: () => specs as readonly RouteSpec[],
  };
}
export type RouteRegistry = ReturnType<typeof createRouteRegistry>;
