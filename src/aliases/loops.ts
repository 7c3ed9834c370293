import { domainOf } from '../message/address.js';
import { catchAllKey } from './goto.js';

/** What loop detection looks at: one tenant's mailboxes, aliases (by address, catch-alls as `@<domain>`) and hostnames. */
export interface AliasGraph {
  mailboxes: ReadonlySet<string>;
  aliases: ReadonlyMap<string, readonly string[]>;
  hostnames: ReadonlySet<string>;
}

/**
 * The path by which aliases with the given destinations would lead back to themselves, or null.
 * Destinations expand as the resolver expands them (a mailbox ends a path, an alias continues
 * with its goto, an unknown address of the tenant's domains continues with that domain's
 * catch-all, an outside address ends), whatever the alias's active flag, so that activating an
 * alias later cannot close a loop.
 */
export function findLoop(graph: AliasGraph, changes: ReadonlyMap<string, readonly string[]>): string[] | null {
  const aliases = new Map(graph.aliases);
  for (const [address, goto] of changes) aliases.set(address, goto);

  const next = (addr: string): readonly string[] => {
    if (addr.startsWith('@')) return aliases.get(addr) ?? [];
    if (graph.mailboxes.has(addr)) return [];
    const host = domainOf(addr);
    if (!graph.hostnames.has(host)) return [];
    const own = aliases.get(addr);
    if (own) return own;
    return aliases.has(catchAllKey(host)) ? [catchAllKey(host)] : [];
  };

  for (const start of changes.keys()) {
    // Depth-first over the whole reachable graph, with the current path to report the loop.
    const done = new Set<string>();
    const path: string[] = [start];
    const walk = (addr: string): string[] | null => {
      for (const n of next(addr)) {
        if (n === start) return [...path, n];
        if (done.has(n) || path.includes(n)) continue;
        path.push(n);
        const found = walk(n);
        if (found) return found;
        path.pop();
        done.add(n);
      }
      return null;
    };
    const found = walk(start);
    if (found) return found;
  }
  return null;
}
