import type { Context, Next } from 'koa';
import { Router } from '@koa/router';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { forbidden, tooManyRequests, unauthorized, type ApiError } from '../errors.js';
import type { Permission } from '../tenants/keys.js';
import type { ApiKey, TenantService } from '../tenants/service.js';
import { readJsonBody } from './body.js';
import { headerKey, legacyKey } from './credentials.js';
import { createRateLimiter } from './rate-limit.js';
import { compileBody, compileText, type JsonSchema } from './validate.js';

type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';

/** What a handler receives: the caller and the validated input. */
export interface RouteInput<B, Q, P> {
  key: ApiKey;
  body: B;
  query: Q;
  params: P;
  /** The media type of a streamed upload the route takes (`uploads`); the handler reads `ctx.req` itself. */
  upload?: string;
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
  /**
   * Media types the route also takes as a streamed body of any size (mail uploads): such a request
   * skips JSON reading and its limit, and the handler streams `ctx.req` itself.
   */
  uploads?: readonly string[];
  query?: JsonSchema;
  params?: JsonSchema;
  /** The handler itself waits for durability before it returns (so the registry need not). */
  durableByHandler?: boolean;
  /** Status codes this operation may answer besides 200, for the description. */
  errors?: number[];
  /**
   * Where the key travels: request headers (variant A, the default), or `key` in the JSON body of a
   * POST and in the query of a GET (legacy variant B, DECISIONS.md section 11), headers unread.
   */
  keyIn?: 'header' | 'legacy';
  /** The status of a key without the permission or the plan: 403 (the default), or 401 where the contract says so. */
  deniedStatus?: 401 | 403;
  /** OpenAPI tags of the operation. */
  tags?: readonly string[];
  /** Marks the operation deprecated in the description. */
  deprecated?: boolean;
  handler(ctx: Context, input: RouteInput<B, Q, P>): unknown | Promise<unknown>;
}

const DEFAULT_BODY_LIMIT = 1024 * 1024;

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

    const legacy = spec.keyIn === 'legacy';
    const denied = (reason: string): ApiError => (spec.deniedStatus === 401 ? unauthorized(reason) : forbidden(reason));
    // An empty body is an empty object (so that a missing field is named); JSON `null` stays null.
    const readBody = async (ctx: Context) => {
      const parsed = await readJsonBody(ctx, spec.bodyLimit ?? DEFAULT_BODY_LIMIT);
      return parsed === undefined ? {} : parsed;
    };

    router[spec.method](koaPath, async (ctx: Context, _next: Next) => {
      let key = null as unknown as ApiKey;
      // Variant B carries its key inside the body, so there the body is read before the key is checked.
      let rawBody: unknown = body && legacy ? await readBody(ctx) : undefined;
      if (spec.permission !== false) {
        const presented = legacy ? legacyKey(ctx, rawBody) : headerKey(ctx);
        const found = presented ? await tenants.authenticate(presented) : null;
        if (!found) throw unauthorized();
        key = found;
        ctx.state.keyId = key.id;
        if (!key.perms.has(spec.permission)) throw denied(`API key lacks the "${spec.permission}" permission`);
        if (spec.plan && !key.planActive && !key.isAdmin) throw denied('No active pricing plan');
        const wait = limiter!(key.id);
        if (wait > 0) throw tooManyRequests('Rate limit exceeded', wait);
      }
      const input = { key, body: undefined as unknown, query: { ...ctx.query } as Record<string, unknown>, params: { ...ctx.params } as Record<string, unknown> };
      if (params) params(input.params);
      if (query) query(input.query);
      const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
      const upload = spec.uploads?.includes(type) ? type : undefined;
      if (upload) (input as { upload?: string }).upload = upload;
      else if (body) {
        if (!legacy) rawBody = await readBody(ctx);
        body(rawBody);
        input.body = rawBody;
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
