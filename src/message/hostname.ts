import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Why `input` is not an acceptable hostname (DECISIONS.md section 3), or null when it is. The
 * reason is a phrase to follow the field name: "Domain <reason>".
 */
export function hostnameProblem(input: string): string | null {
  if (input.length === 0) return 'must not be empty';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) return 'must not include a scheme';
  if (input.includes('/')) return 'must not include a path';
  if (input.startsWith('[') || isIP(input) !== 0) return 'must not be an IP address';
  if (input.includes(':')) return 'must not include a port';
  if (/\s/.test(input)) return 'must not contain spaces';
  if (input.endsWith('.')) return 'must not end with a dot';
  if (input.includes('_')) return 'must not contain underscores';
  const ascii = toAscii(input);
  if (ascii === null) return 'is not a valid hostname';
  if (ascii.length > 253) return 'must be at most 253 characters';
  const labels = ascii.split('.');
  if (labels.length < 2) return 'must have at least two labels (single-label names are not accepted)';
  for (const label of labels) {
    if (label.length === 0) return 'must not contain empty labels';
    if (label.length > 63) return 'must have labels of at most 63 characters';
    if (!LABEL.test(label)) return `has an invalid label "${label}" (letters, digits and inner hyphens only)`;
  }
  for (const label of labels) {
    // An A-label must decode (RFC 5891 section 5.4); node's converter refuses the ones that do not.
    if (label.startsWith('xn--') && domainToASCII(label) === '') return `has an invalid internationalised label "${label}"`;
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return 'must not end in an all-numeric label';
  return null;
}

function toAscii(input: string): string | null {
  // Pure ASCII input is only lower-cased, so that odd characters are reported rather than mapped.
  if (/^[\x21-\x7e]*$/.test(input)) return input.toLowerCase();
  const ascii = domainToASCII(input);
  return ascii === '' ? null : ascii.toLowerCase();
}

/** The stored form of a valid hostname: lower-case ASCII, internationalised names as punycode. */
export function normalizeHostname(input: string): string {
  return toAscii(input) ?? input.toLowerCase();
}

/** Whether `label` is one DNS label of letters, digits and inner hyphens (sub-domain requests). */
export const isHostLabel = (label: string) => label.length <= 63 && LABEL.test(label.toLowerCase());
