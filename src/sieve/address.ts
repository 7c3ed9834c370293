// Address parts of RFC 5228 2.7.4 and RFC 5233 (subaddress: user+detail).
import addressparser from 'nodemailer/lib/addressparser/index.js';

export type AddressPart = 'all' | 'localpart' | 'domain' | 'user' | 'detail';
/** local+detail (RFC 5233; DECISIONS.md section 19). */
export const DETAIL_SEPARATORS = '+';

// The common shapes of a one-address field, read without the full parser: `local@domain`, and
// `Display Name <local@domain>` whose name has none of the characters that make it structured
// (quotes, comments, groups, lists, escapes). Anything else goes to addressparser.
const ATOM_ADDRESS = String.raw`([A-Za-z0-9.!#$%&'*+/=?^_\`{|}~-]+@[A-Za-z0-9.-]+)`;
const BARE = new RegExp(`^\\s*${ATOM_ADDRESS}\\s*$`);
const NAMED = new RegExp(`^\\s*[^"<>(),;:\\\\@\\[\\]]*<${ATOM_ADDRESS}>\\s*$`);

/** The addresses of one header field value (groups flattened). */
export function addressesOf(value: string): string[] {
  const out: string[] = [];
  // An empty header is one empty address for :all (RFC 5228 2.7.4 keeps it matchable against "").
  if (value.trim() === '') return [''];
  const simple = BARE.exec(value) ?? NAMED.exec(value);
  if (simple) return [simple[1]];
  for (const a of addressparser(value, { flatten: true })) if (a.address) out.push(a.address);
  return out;
}

/** One part of an address, or null when it has none (:detail without a separator). */
export function addressPart(address: string, part: AddressPart, separators = DETAIL_SEPARATORS): string | null {
  if (part === 'all') return address;
  const at = address.lastIndexOf('@');
  // "If an address is not syntactically valid, then it will not be matched by tests specifying
  // :localpart or :domain" (RFC 5228 2.7.4).
  if (at <= 0 || at === address.length - 1) return null;
  const local = at < 0 ? address : address.slice(0, at);
  if (part === 'domain') return address.slice(at + 1);
  if (part === 'localpart') return local;
  // The first of any separator character splits user from detail.
  let sep = -1;
  for (let i = 0; i < local.length; i++) if (separators.includes(local[i])) { sep = i; break; }
  if (part === 'user') return sep < 0 ? local : local.slice(0, sep);
  return sep < 0 ? null : local.slice(sep + 1);
}

const DOMAIN = String.raw`(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[^\]\s]+\])`;
const SOURCE_ROUTE = new RegExp(`^@${DOMAIN}(?:,@${DOMAIN})*:`);
const MAILBOX = new RegExp(`^(?:"(?:[^"\\\\]|\\\\.)*"|[^\\s@<>(),;:"\\[\\]]+)(?:@${DOMAIN})?$`);

/**
 * An SMTP path (RFC 5321 4.1.2) as the envelope test sees it: angle brackets and a source route
 * dropped; "" for the null path; null for a path that is not syntactically valid (it then matches nothing).
 */
export function normalizeEnvelopePath(path: string): string | null {
  let text = path.trim();
  if (text.startsWith('<') || text.endsWith('>')) {
    if (!(text.startsWith('<') && text.endsWith('>'))) return null;
    text = text.slice(1, -1);
    if (text.includes('<') || text.includes('>')) return null;
  }
  if (text === '') return '';
  if (text.startsWith('@')) {
    const route = SOURCE_ROUTE.exec(text);
    if (!route) return null;
    text = text.slice(route[0].length);
  }
  return MAILBOX.test(text) ? text : null;
}
