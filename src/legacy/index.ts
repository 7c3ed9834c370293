import type { Aliases } from '../aliases/index.js';
import type { Core } from '../core.js';
import type { installDomains } from '../domains/index.js';
import type { Mailboxes } from '../mailboxes/index.js';
import { legacyAliasRoutes } from './alias-routes.js';
import { legacyDomainRoutes } from './domain-routes.js';
import { legacyMailboxRoutes } from './mailbox-routes.js';

/**
 * Wires legacy request variant B (SPEC.md "Versioning", DECISIONS.md section 11) under
 * /api/legacy/v1: nine operations that translate requests onto the services of domains, mailboxes
 * and aliases and shape their answers. No rule lives here; any other path below /api/legacy is 404.
 */
export function installLegacy(core: Core, deps: { domains: ReturnType<typeof installDomains>; mailboxes: Mailboxes; aliases: Aliases }) {
  const { registry, queue, config } = core;
  legacyDomainRoutes({ registry, domains: deps.domains.service, config });
  legacyMailboxRoutes({ registry, mailboxes: deps.mailboxes.service, queue });
  legacyAliasRoutes({ registry, aliases: deps.aliases.service });
}
