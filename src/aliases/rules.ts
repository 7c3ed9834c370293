import type { Db } from '../db/connection.js';
import { unprocessable } from '../errors.js';
import { findLoop } from './loops.js';
import type { AliasStore } from './store.js';

/** Most aliases (the catch-all included) one domain may have: the plan limit of DECISIONS.md section 6. */
export const MAX_ALIASES_PER_DOMAIN = 500;

/** One alias as a create request names it, after validation. */
export interface AliasSpec { address: string; goto: string[] }

/**
 * The rules that hold both before enqueue and again inside the task (the state may have moved in
 * between): addresses free, the domain's alias limit, and no loops. `label` names each alias in
 * refusals;
 * `loopField` names the destinations in a loop refusal.
 */
export async function checkNewAliases(db: Db, store: AliasStore, tenantId: number, domain: { id: number; hostname: string }, specs: AliasSpec[], label: (i: number) => string, loopField: string) {
  const used = await store.usesAmong(db, specs.map((s) => s.address));
  for (const [i, s] of specs.entries()) {
    const use = used.get(s.address);
    if (use && s.address.startsWith('@')) throw unprocessable(`A catch-all already exists for ${domain.hostname}`);
    if (use) throw unprocessable(`${label(i)} ${s.address} already exists as ${use === 'mailbox' ? 'a mailbox' : 'an alias'}`);
  }
  const count = await store.countOnDomain(db, domain.id);
  if (count + specs.length > MAX_ALIASES_PER_DOMAIN) {
    throw unprocessable(`Alias limit reached: ${domain.hostname} has ${count} of ${MAX_ALIASES_PER_DOMAIN} aliases` + (specs.length > 1 ? ` and this request adds ${specs.length}` : ''));
  }
  await checkNoLoop(db, store, tenantId, new Map(specs.map((s) => [s.address, s.goto])), loopField);
}

/** Refuses destinations that would lead an alias back to itself. */
export async function checkNoLoop(db: Db, store: AliasStore, tenantId: number, changes: Map<string, string[]>, field: string) {
  const loop = findLoop(await store.graph(db, tenantId), changes);
  if (loop) throw unprocessable(`${field} creates a loop: ${loop.join(' -> ')}`);
}
