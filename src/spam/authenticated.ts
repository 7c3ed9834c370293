import type { AuthResults } from '../inbound/types.js';

/** The domain of an address, lower case ('' without one). */
export const domainOfAddress = (address: string): string => {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).trim().toLowerCase();
};

/** Relaxed alignment (RFC 7489 3.1): one domain is the other or a sub-domain of it. */
function aligned(a: string, b: string): boolean {
  if (!a || !b) return false;
  return a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
}

/**
 * Whether the From domain authenticates (DECISIONS.md section 18): DMARC pass, or a DKIM pass or SPF
 * pass whose domain aligns with it. Allow entries and known correspondents count only then, so a
 * forged From gains nothing from them.
 */
export function fromAuthenticates(auth: AuthResults | null, fromEmail: string): boolean {
  if (!auth) return false;
  if (auth.dmarc?.result === 'pass') return true;
  const from = domainOfAddress(fromEmail);
  if (auth.dkim?.result === 'pass' && (auth.dkim.domains ?? []).some((d) => aligned(String(d).toLowerCase(), from))) return true;
  if (auth.spf?.result === 'pass' && typeof auth.spf.domain === 'string' && aligned(auth.spf.domain.toLowerCase(), from)) return true;
  return false;
}

/** Whether authentication says the From address is forged: its domain publishes DMARC and the message fails it. */
export const fromForged = (auth: AuthResults | null): boolean => auth?.dmarc?.result === 'fail';

/** DMARC failed under a quarantine policy (the message is junk, reason DMARC_QUARANTINE). */
export function dmarcQuarantine(auth: AuthResults | null): boolean {
  return auth?.dmarc?.result === 'fail' && String(auth.dmarc.policy ?? '').toLowerCase() === 'quarantine';
}
