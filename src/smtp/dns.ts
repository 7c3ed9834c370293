import { Resolver } from 'node:dns';
import { Resolver as PromiseResolver } from 'node:dns/promises';

/** How long one DNS query may take before it counts as a temporary error. */
export const DNS_TIMEOUT_MS = 2_000;

/** A resolver over MAILSTEAD_DNS_SERVERS (the system's when empty), one try, short timeout. */
export function createPromiseResolver(servers: readonly string[], timeout = DNS_TIMEOUT_MS): PromiseResolver {
  const resolver = new PromiseResolver({ timeout, tries: 1 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}

/** The callback resolver smtp-server uses for the client's reverse name, over the same servers. */
export function createReverseResolver(servers: readonly string[], timeout = DNS_TIMEOUT_MS): Resolver {
  const resolver = new Resolver({ timeout, tries: 1 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}
