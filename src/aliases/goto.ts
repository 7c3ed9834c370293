import { addressProblem, normalizeAddress } from '../message/address.js';
import { hostnameProblem, normalizeHostname } from '../message/hostname.js';
import { unprocessable } from '../errors.js';

/** Most destinations one alias may have (DECISIONS.md section 6). */
export const MAX_DESTINATIONS = 50;

/**
 * The destinations of `goto` (a comma-separated string or an array of addresses): each validated,
 * normalised, duplicates removed, at least one and at most 50. `field` names it in refusals.
 */
export function parseGoto(field: string, value: string | string[]): string[] {
  const raw = (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim());
  const items = Array.isArray(value) ? raw : raw.filter((s) => s.length > 0);
  if (items.length === 0) throw unprocessable(`${field} must name at least one destination`);
  for (const item of items) {
    const problem = addressProblem(item);
    if (problem) throw unprocessable(`${field} destination ${JSON.stringify(item)} ${problem}`);
  }
  const out = [...new Set(items.map(normalizeAddress))];
  if (out.length > MAX_DESTINATIONS) throw unprocessable(`${field} must have at most ${MAX_DESTINATIONS} destinations`);
  return out;
}

/** The catch-all key of a hostname. */
export const catchAllKey = (hostname: string) => `@${hostname}`;

/**
 * An alias address as clients name it in edit and delete requests: a full address, or `@<domain>`
 * for the catch-all. Returns the stored form, or throws 422 naming `field`.
 */
export function parseAliasAddress(field: string, value: string): string {
  if (value.startsWith('@')) {
    const problem = hostnameProblem(value.slice(1));
    if (problem) throw unprocessable(`${field} has a catch-all domain that ${problem}`);
    return catchAllKey(normalizeHostname(value.slice(1)));
  }
  const problem = addressProblem(value);
  if (problem) throw unprocessable(`${field} ${problem}`);
  return normalizeAddress(value);
}
