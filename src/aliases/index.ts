import type { Core } from '../core.js';
import type { RecipientResolver } from '../inbound/types.js';
import type { Mailboxes } from '../mailboxes/index.js';
import { cachedRecipientResolver, createRecipientResolver } from './resolver.js';
import { aliasRoutes } from './routes.js';
import { createAliasService } from './service.js';
import { createAliasStore } from './store.js';
import { aliasTasks } from './tasks.js';

/**
 * Wires the aliases capability: store, service, task handlers, routes and the recipient resolver.
 * Aliases of deleted domains go with the domain (the mailboxes capability's delete removes them).
 */
export function installAliases(core: Core, _deps: { mailboxes: Mailboxes }) {
  const { db, queue, tenants, clock, registry } = core;
  const store = createAliasStore();
  const service = createAliasService({ db, store, queue, tenants, clock });
  queue.register(...aliasTasks({ store, clock }));
  aliasRoutes({ registry, aliases: service, queue });
  const resolve: RecipientResolver = cachedRecipientResolver(createRecipientResolver(db, core.backend), core.directoryVersion);
  return {
    store,
    service,
    /** Where mail for an address goes; every inbound path calls this. */
    resolve,
  };
}
/** What the aliases capability offers to later ones. */
export type Aliases = ReturnType<typeof installAliases>;
