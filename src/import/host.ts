import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressProblem, bareHost } from '../webhooks/guard.js';

/** Refused: the source host is not a public address (and private ones are not allowed). */
export class RefusedHostError extends Error {}

const LOCAL_NAMES = /(^|\.)localhost\.?$/i;

/**
 * The address to connect to for an import source: a name is resolved once and every answer must
 * be public unless `allowPrivate` (MAILSTEAD_IMPORT_ALLOW_PRIVATE), so an import cannot be aimed
 * at the appliance's own network. The connection then goes to this very address (with the name
 * for TLS), so a name that changes its answer afterwards changes nothing.
 */
export async function sourceAddress(host: string, allowPrivate: boolean): Promise<string> {
  const bare = bareHost(host);
  if (isIP(bare)) {
    const problem = allowPrivate ? null : addressProblem(bare);
    if (problem) throw new RefusedHostError(`${bare} is a ${problem} address; imports reach public hosts only`);
    return bare;
  }
  if (!allowPrivate && LOCAL_NAMES.test(bare)) throw new RefusedHostError(`${bare} is a local name; imports reach public hosts only`);
  let found: Array<{ address: string }>;
  try {
    found = await lookup(bare, { all: true });
  } catch {
    throw new RefusedHostError(`${bare} does not resolve`);
  }
  if (found.length === 0) throw new RefusedHostError(`${bare} does not resolve`);
  if (!allowPrivate) {
    for (const a of found) {
      const problem = addressProblem(a.address);
      if (problem) throw new RefusedHostError(`${bare} resolves to ${a.address}, a ${problem} address; imports reach public hosts only`);
    }
  }
  return found[0]!.address;
}
