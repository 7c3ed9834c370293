/**
 * Pure rules of a hostname's DNS status (DECISIONS.md section 4): `pending` until the
 * verification TXT and both MX records verify, then `verified`; a verified hostname whose records
 * fail 3 checks in a row becomes `unverified`; any passing check makes it `verified` again.
 */

/** The domain statuses this loop manages; others (set by other capabilities) are left alone. */
export const CHECKED_STATUSES = ['pending', 'verified', 'unverified'] as const;

/** Consecutive failed checks after which a verified hostname becomes unverified. */
export const FAILURES_TO_UNVERIFY = 3;

/** A hostname's DNS state as stored on the domains row. */
export interface DomainDnsState {
  status: string;
  failedChecks: number;
  /** When it last became verified. */
  verifiedAt: number | null;
}

/** A record with the status a check gave it. */
export interface CheckedRecord {
  type: string;
  name: string;
  status: string;
}

/**
 * Whether the records that prove the hostname is ours verified: the `_mailstead.` verification
 * TXT and at least two MX records, all of them. SPF, DKIM and DMARC are reported but do not decide
 * the status (mail is routed by MX; the token proves ownership).
 */
export function provesOwnership(hostname: string, records: readonly CheckedRecord[]): boolean {
  const mx = records.filter((r) => r.type.toUpperCase() === 'MX');
  const token = records.filter((r) => r.type.toUpperCase() === 'TXT' && r.name.toLowerCase() === `_mailstead.${hostname}`);
  return mx.length >= 2 && token.length >= 1 && [...mx, ...token].every((r) => r.status === 'verified');
}

/**
 * The state after a conclusive check. `passed` is `provesOwnership` of the new record statuses.
 * A failed check counts only against a hostname that was verified (or already unverified); a
 * pending one simply stays pending.
 */
export function nextDomainState(prev: DomainDnsState, passed: boolean, now: number): DomainDnsState {
  if (!(CHECKED_STATUSES as readonly string[]).includes(prev.status)) return prev;
  if (passed) {
    return { status: 'verified', failedChecks: 0, verifiedAt: prev.status === 'verified' ? prev.verifiedAt ?? now : now };
  }
  if (prev.status === 'pending') return prev;
  const failedChecks = prev.failedChecks + 1;
  return { status: failedChecks >= FAILURES_TO_UNVERIFY ? 'unverified' : prev.status, failedChecks, verifiedAt: prev.verifiedAt };
}
