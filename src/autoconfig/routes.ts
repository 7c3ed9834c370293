import type { Context, Middleware } from 'koa';
import type { Db } from '../db/connection.js';
import { addressProblem, domainOf, normalizeAddress } from '../message/address.js';
import { hostnameProblem, normalizeHostname } from '../message/hostname.js';
import type { DomainStore } from '../domains/store.js';
import { ApiError, notFound } from '../errors.js';
import { readRawBody } from '../http/body.js';
import type { RouteRegistry } from '../http/registry.js';
import { appleProfile } from './apple.js';
import { outlookResponse, requestedAddress } from './outlook.js';
import { clientSettings, type ClientSettings } from './settings.js';
import { thunderbirdConfig } from './thunderbird.js';

/** Thunderbird asks the domain's own host at the well-known path, then `autoconfig.<domain>` at the short one. */
const THUNDERBIRD_PATHS = new Set(['/.well-known/autoconfig/mail/config-v1.1.xml', '/mail/config-v1.1.xml']);
/** Outlook's path, matched without case: clients send both `/autodiscover/` and `/Autodiscover/`. */
const OUTLOOK_PATH = '/autodiscover/autodiscover.xml';
/** An autodiscover request is a few hundred bytes. */
const OUTLOOK_BODY_LIMIT = 64 * 1024;

interface Deps { db: Db; hostname: string; domainStore: DomainStore }

/** The hostname as stored, or null when `input` is no valid hostname. */
function hostnameOf(input: string): string | null {
  const host = input.trim().replace(/\.$/, '');
  return hostnameProblem(host) === null ? normalizeHostname(host) : null;
}

/**
 * The settings of the first candidate that is a hosted hostname (any tenant, any DNS status: mail
 * is accepted for it), or a 404.
 */
async function settingsFor(deps: Deps, candidates: Array<string | null>): Promise<ClientSettings> {
  for (const c of candidates) {
    if (c && (await deps.domainStore.byHostname(deps.db, c))) return clientSettings(c, deps.hostname);
  }
  throw notFound('Domain not hosted here');
}

function allow(ctx: Context, methods: string): boolean {
  if (methods.split(', ').includes(ctx.method)) return true;
  ctx.set('Allow', methods);
  throw new ApiError(405, 'Method not allowed');
}

/**
 * Thunderbird's and Outlook's lookups on the HTTP listener, outside /api and without a key
 * (DECISIONS.md section 21). Thunderbird's domain is the `emailaddress` parameter's when it names
 * one, else the Host header's (without the `autoconfig.` label of the second lookup).
 */
export function autoconfigMiddleware(deps: Deps): Middleware {
  return async (ctx, next) => {
    if (THUNDERBIRD_PATHS.has(ctx.path)) {
      allow(ctx, 'GET, HEAD');
      const param = typeof ctx.query.emailaddress === 'string' ? ctx.query.emailaddress : '';
      const fromAddress = param && addressProblem(param) === null ? domainOf(normalizeAddress(param)) : null;
      const host = hostnameOf(ctx.request.hostname);
      const candidates = fromAddress ? [fromAddress] : [host, host?.startsWith('autoconfig.') ? host.slice('autoconfig.'.length) : null];
      const settings = await settingsFor(deps, candidates);
      ctx.type = 'application/xml; charset=utf-8';
      ctx.body = thunderbirdConfig(settings);
      return;
    }
    if (ctx.path.toLowerCase() === OUTLOOK_PATH) {
      allow(ctx, 'POST');
      const raw = await readRawBody(ctx, OUTLOOK_BODY_LIMIT);
      const address = raw ? requestedAddress(raw.toString('utf8')) : null;
      if (!address || addressProblem(address) !== null) throw new ApiError(400, 'Body must be an autodiscover request with a valid EMailAddress');
      const login = normalizeAddress(address);
      const settings = await settingsFor(deps, [domainOf(login)]);
      ctx.type = 'application/xml; charset=utf-8';
      ctx.body = outlookResponse(settings, login);
      return;
    }
    return next();
  };
}

/** GET /api/v1/mailboxes/{email}/mobileconfig: an Apple profile for one of the tenant's mailboxes. */
export function mobileconfigRoute(registry: RouteRegistry, deps: Deps): void {
  registry.add<unknown, unknown, { email: string }>({
    method: 'get', path: '/v1/mailboxes/{email}/mobileconfig',
    summary: 'An Apple configuration profile (.mobileconfig) that sets up the mailbox in Apple Mail (no password inside)',
    permission: 'read',
    params: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'mailstead-email' } } },
    errors: [404],
    async handler(ctx, { key, params }) {
      const address = normalizeAddress(params.email);
      const mailbox = await deps.db.selectFrom('mailboxes').select(['address', 'display_name'])
        .where('tenant_id', '=', key.tenantId).where('address', '=', address).executeTakeFirst();
      if (!mailbox) throw notFound('Mailbox not found');
      const profile = appleProfile(clientSettings(domainOf(address), deps.hostname), mailbox.address, mailbox.display_name);
      ctx.set('Content-Disposition', `attachment; filename="${mailbox.address.replace(/[^A-Za-z0-9@._-]/g, '_')}.mobileconfig"`);
      ctx.type = 'application/x-apple-aspen-config';
      ctx.body = profile;
    },
  });
}
