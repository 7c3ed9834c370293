import type { Core } from '../core.js';
import type { installDomains } from '../domains/index.js';
import { autoconfigMiddleware, mobileconfigRoute } from './routes.js';

/**
 * Mail client autoconfiguration (DECISIONS.md section 21): Thunderbird's autoconfig and Outlook's
 * autodiscover as a middleware of the HTTP listener (no key), and the Apple profile per mailbox as
 * an API route. Returns the middleware for app.ts to mount beside ACME's well-known responder.
 */
export function installAutoconfig(core: Core, { domains }: { domains: ReturnType<typeof installDomains> }) {
  const deps = { db: core.db, hostname: core.config.hostname, domainStore: domains.store };
  mobileconfigRoute(core.registry, deps);
  return { middleware: autoconfigMiddleware(deps) };
}
