import type { Db } from '../db/connection.js';
import { addressProblem, domainOf, isUtf8LocalPart, normalizeAddress } from '../message/address.js';
import { hostnameProblem, normalizeHostname } from '../message/hostname.js';
import type { RecipientResolver, Resolution } from '../inbound/types.js';
import { backendOf, type Backend } from '../db/backend.js';
import type { RecipientSnapshot, SnapshotQuery } from './ports.js';
import { readRecipientSnapshot, snapshotQueryOf } from './store.js';

export type { RecipientSnapshot } from './ports.js';

/** How many alias hops (alias or catch-all expansions) a resolution follows before it stops. */
export const MAX_ALIAS_DEPTH = 10;

/**
 * Where mail for `address` goes (DECISIONS.md sections 6 and 7), over a snapshot: the mailbox
 * itself; else an active alias whose destinations are resolved the same way (chains followed up to
 * MAX_ALIAS_DEPTH hops, each address visited once, so loops are cut); else the domain's active
 * catch-all, whose destinations are resolved the same way; else unknown. Destinations outside the
 * tenant's own domains are forwards. An alias that leads nowhere resolves as unknown.
 */
export function resolveRecipient(snapshot: RecipientSnapshot, address: string): Resolution {
  const home = snapshot.domains.get(domainOf(address));
  if (!home) return { kind: 'not-hosted' };
  const tenantId = home.tenantId;
  const mailboxIds = new Set<number>();
  const forwards = new Set<string>();
  const seen = new Set<string>();

  const expand = (goto: readonly string[], depth: number) => {
    for (const next of goto) visit(next, depth + 1);
  };

  function visit(addr: string, depth: number): void {
    if (seen.has(addr)) return;
    seen.add(addr);
    const host = domainOf(addr);
    const domain = snapshot.domains.get(host);
    // Another tenant's domain is as foreign to this tenant as the rest of the internet.
    if (!domain || domain.tenantId !== tenantId) { forwards.add(addr); return; }
    const mailbox = snapshot.mailboxes.get(addr);
    if (mailbox && mailbox.tenantId === tenantId) { mailboxIds.add(mailbox.id); return; }
    if (depth >= MAX_ALIAS_DEPTH) return;
    const alias = snapshot.aliases.get(addr);
    if (alias && alias.active && alias.tenantId === tenantId) { expand(alias.goto, depth); return; }
    const catchAllKey = `@${host}`;
    if (seen.has(catchAllKey)) return;
    seen.add(catchAllKey);
    const catchAll = snapshot.aliases.get(catchAllKey);
    if (catchAll && catchAll.active && catchAll.tenantId === tenantId) expand(catchAll.goto, depth);
  }

  visit(address, 0);
  if (mailboxIds.size === 0 && forwards.size === 0) return { kind: 'unknown', tenantId };
  return { kind: 'deliver', tenantId, mailboxIds: [...mailboxIds], forwards: [...forwards] };
}

/**
 * Where an address that no mailbox or alias could have goes. A UTF-8 local part (RFC 6531) at a
 * hosted domain goes to the domain's catch-all, which takes any local part; any other local part
 * outside what mailbox names allow is an unknown recipient there. Elsewhere it is not hosted.
 */
async function invalidAddress(db: Db, query: SnapshotQuery, input: string): Promise<Resolution> {
  const at = input.lastIndexOf('@');
  const host = input.slice(at + 1);
  if (at < 0 || hostnameProblem(host) !== null) return { kind: 'not-hosted' };
  const hostname = normalizeHostname(host);
  const local = input.slice(0, at);
  if (isUtf8LocalPart(local)) {
    const address = `${local.toLowerCase()}@${hostname}`;
    return resolveRecipient(await readRecipientSnapshot(db, address, query), address);
  }
  const home = await db.selectFrom('domains').select('tenant_id').where('hostname', '=', hostname).executeTakeFirst();
  return home ? { kind: 'unknown', tenantId: home.tenant_id } : { kind: 'not-hosted' };
}

/**
 * The resolver every inbound path calls: reads the snapshot reachable from the address in one
 * query, then resolves it with `resolveRecipient`. Addresses that are not valid are never
 * delivered (`invalidAddress`).
 */
export function createRecipientResolver(db: Db, backend: Backend = backendOf(db)): RecipientResolver {
  const query = snapshotQueryOf(backend);
  return async (input: string) => {
    if (addressProblem(input) !== null) return invalidAddress(db, query, input);
    const address = normalizeAddress(input);
    const snapshot = await readRecipientSnapshot(db, address, query);
    const base = subaddressBase(address);
    if (base === null || ownsAddress(snapshot, address)) return resolveRecipient(snapshot, address);
    // Subaddressing (RFC 5233, DECISIONS.md section 19): local+detail is local's mail before the catch-all's.
    const baseSnapshot = await readRecipientSnapshot(db, base, query);
    return ownsAddress(baseSnapshot, base) ? resolveRecipient(baseSnapshot, base) : resolveRecipient(snapshot, address);
  };
}

/** `local@domain` of `local+detail@domain`, or null for an address without a detail. */
export function subaddressBase(address: string): string | null {
  const at = address.lastIndexOf('@');
  const plus = address.indexOf('+');
  if (plus <= 0 || plus > at) return null;
  return address.slice(0, plus) + address.slice(at);
}

/** Whether the address itself is a mailbox or an active alias (not only the catch-all's). */
function ownsAddress(snapshot: RecipientSnapshot, address: string): boolean {
  const tenant = snapshot.domains.get(domainOf(address))?.tenantId;
  if (tenant === undefined) return false;
  const mailbox = snapshot.mailboxes.get(address);
  if (mailbox && mailbox.tenantId === tenant) return true;
  const alias = snapshot.aliases.get(address);
  return !!alias && alias.active && alias.tenantId === tenant;
}

/** Most addresses a cached resolver remembers (emptied when it would grow past this). */
const CACHE_SIZE = 10_000;

/**
 * A resolver that remembers answers while the directory cannot have changed: each answer is kept
 * with the directory's version (`directoryVersion`, core.ts) it was read at and reused only while that count is the same.
 * On SQLite the count is the connection's total_changes(): every write through it (a mailbox, an
 * alias or a domain provisioned or removed, but also any other row) moves it, and under inbound
 * load nothing is written through it (storage has its own connection). On PostgreSQL it is the
 * directory count of db/pg-directory.ts, moved by a commit on any node that changes domains,
 * mailboxes or aliases (a NOTIFY, so a few ms late for other nodes' commits: see there). Either
 * way a busy recipient costs one lookup.
 */
export function cachedRecipientResolver(resolve: RecipientResolver, directoryVersion: () => number): RecipientResolver {
  const cache = new Map<string, { at: number; value: Resolution }>();
  return async (address) => {
    const at = directoryVersion();
    const hit = cache.get(address);
    if (hit && hit.at === at) return hit.value;
    const value = await resolve(address);
    // A change while the lookup ran: the answer may already be old, keep it for nobody.
    if (directoryVersion() === at) {
      if (cache.size >= CACHE_SIZE) cache.clear();
      cache.set(address, { at, value });
    }
    return value;
  };
}
