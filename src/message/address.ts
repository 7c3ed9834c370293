import { hostnameProblem, normalizeHostname } from './hostname.js';

// RFC 5322 dot-atom: atext runs separated by single dots.
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

// RFC 6531 section 3.3: the same with atext extended by every non-ASCII character (no C1 controls).
const UTF8_ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\u00a0-\\u{10ffff}-]+";
const UTF8_DOT_ATOM = new RegExp(`^${UTF8_ATEXT}(\\.${UTF8_ATEXT})*$`, 'u');

/**
 * Whether `local` is an internationalised local part (RFC 6531): a dot-atom with at least one
 * non-ASCII character, at most 64 octets. No mailbox or alias is named so, but a catch-all takes it.
 */
export function isUtf8LocalPart(local: string): boolean {
  return /[^\x00-\x7f]/.test(local) && Buffer.byteLength(local) <= 64 && UTF8_DOT_ATOM.test(local);
}

/** Why `local` is not an acceptable local part (the part before the @), or null when it is. */
export function localPartProblem(local: string): string | null {
  if (local.length === 0) return 'must not be empty';
  if (local.length > 64) return 'must be at most 64 characters';
  return DOT_ATOM.test(local) ? null : 'must be a valid local part (letters, digits and !#$%&\'*+/=?^_`{|}~- in dot-separated runs)';
}

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
