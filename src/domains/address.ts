import { hostnameProblem, normalizeHostname } from './hostname.js';

// RFC 5322 dot-atom: atext runs separated by single dots.
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/** Why `input` is not an acceptable email address (DECISIONS.md section 3), or null when it is. */
export function addressProblem(input: string): string | null {
  const at = input.lastIndexOf('@');
  if (at <= 0 || at === input.length - 1) return 'must be an address of the form local@domain';
  const local = input.slice(0, at);
  if (local.length > 64) return 'must have a local part of at most 64 characters';
  if (!DOT_ATOM.test(local)) return 'has an invalid local part';
  const hostProblem = hostnameProblem(input.slice(at + 1));
  return hostProblem ? `has a domain that ${hostProblem}` : null;
}

/** The stored form of a valid address: local part and domain lower-cased, domain as punycode. */
export function normalizeAddress(input: string): string {
  const at = input.lastIndexOf('@');
  return `${input.slice(0, at).toLowerCase()}@${normalizeHostname(input.slice(at + 1))}`;
}

/** The domain part of a normalised address. */
export const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1);
/** The local part of a normalised address. */
export const localPartOf = (address: string) => address.slice(0, address.lastIndexOf('@'));
