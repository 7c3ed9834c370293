import type { RecipientResolver, Resolution } from '../inbound/types.js';
import { LOCAL_ERROR, OVER_QUOTA, RELAY_DENIED, TOO_MANY_RECIPIENTS, UNKNOWN_USER } from '../smtp-replies.js';

/** A recipient accepted at RCPT TO: its resolution is what ingest delivers to. */
export type Deliverable = Extract<Resolution, { kind: 'deliver' }>;

/** Ids of the mailboxes among `mailboxIds` that cannot take `incomingBytes` more (quota used up). */
export type QuotaCheck = (mailboxIds: number[], incomingBytes: number) => Promise<number[]>;

/**
 * Whether an RCPT address tries to route mail onwards instead of naming a local recipient:
 * quoted local parts (`"a@b"@us`), the percent hack (`user%other.example@us`), bang paths
 * (`other!user@us`) and anything with more than one `@`. Source routes (`@hop:user@x`) were
 * already stripped by the protocol layer, which leaves the final address to be judged.
 */
export function routesElsewhere(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at <= 0) return true;
  const local = address.slice(0, at);
  return /["%!@\\]/.test(local) || address.slice(at + 1).startsWith('[');
}

const QUOTED_DOT_ATOM = /^"([A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*)"@/;

/**
 * The address with a quoted local part that needs no quotes written without them: RFC 5321
 * section 4.1.2 makes `"box"@us` and `box@us` the same mailbox. Quotes around anything else (a
 * space, `@`, a backslash) stay, and routesElsewhere refuses them.
 */
export function unquotedLocalPart(address: string): string {
  return address.replace(QUOTED_DOT_ATOM, '$1@');
}

/**
 * The RCPT TO policy: at most `maxRecipients` per message, no relaying whatever the sender
 * claims, known recipients only, and not into a mailbox that is full. Resolves with where the
 * recipient's mail goes, or rejects with the SMTP reply to send. Mail for this server's own
 * `hostname` (`<Postmaster>` becomes postmaster@ it) is never a relay: nobody hosting the address
 * there makes it an unknown user.
 */
export function createRecipientCheck({ resolve, quota, maxRecipients, hostname }: {
  resolve: RecipientResolver; quota: QuotaCheck | null; maxRecipients: number; hostname?: string;
}) {
  const ownDomain = hostname ? `@${hostname.toLowerCase()}` : null;
  return async (address: string, acceptedSoFar: number, declaredSize: number): Promise<Deliverable> => {
    if (acceptedSoFar >= maxRecipients) throw TOO_MANY_RECIPIENTS();
    address = unquotedLocalPart(address);
    if (routesElsewhere(address)) throw RELAY_DENIED();
    let resolution: Resolution;
    try {
      resolution = await resolve(address);
    } catch {
      throw LOCAL_ERROR();
    }
    if (resolution.kind === 'not-hosted') throw ownDomain && address.toLowerCase().endsWith(ownDomain) ? UNKNOWN_USER() : RELAY_DENIED();
    if (resolution.kind === 'unknown') throw UNKNOWN_USER();
    // Refused only when nothing at all could take the message; a partly full alias still delivers.
    if (quota && resolution.forwards.length === 0 && resolution.mailboxIds.length > 0) {
      let full: number[];
      try {
        full = await quota(resolution.mailboxIds, declaredSize);
      } catch {
        throw LOCAL_ERROR();
      }
      if (full.length >= resolution.mailboxIds.length) throw OVER_QUOTA();
    }
    return resolution;
  };
}
/** The RCPT TO policy as a function. */
export type RecipientCheck = ReturnType<typeof createRecipientCheck>;
