import { createHmac } from 'node:crypto';

/**
 * Sender Rewriting Scheme (Shevek's "guarded" scheme, as libsrs2 and postsrsd write it), so that a
 * copy forwarded by one of our aliases passes SPF at the next hop and its bounces come back to us:
 *
 *   SRS0=HHHH=TT=orig-domain=orig-local@alias-domain
 *   SRS1=HHHH=first-forwarder-domain==HHHH=TT=orig-domain=orig-local@alias-domain
 *
 * TT is the day (days since the epoch mod 1024) in two base32 characters; HHHH the first four
 * characters of the base64 HMAC-SHA1 over the lower-cased fields. Hashes and stamps are compared
 * case-insensitively because some MTAs lower-case the local part on the way back.
 */
export interface Srs {
  /** Envelope sender for a copy forwarded by an alias at `aliasDomain`. '' (null sender) stays ''. */
  forward(sender: string, aliasDomain: string, now: Date): string;
  /** Decodes an SRS address. null: not SRS at all. ok:false: SRS but bad hash/age (>21 days)/format. For SRS1 the result is the SRS0 address at the first forwarder's domain. */
  reverse(address: string, now: Date): { ok: true; address: string } | { ok: false; reason: string } | null;
}

/** RFC 4648 base32 alphabet, the one libsrs2 uses for the timestamp. */
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const DAY_MS = 86_400_000;
/** The stamp wraps every 1024 days (two base32 characters). */
const TIME_SLOTS = 1024;
/** How old a returning SRS0 address may be, in days (libsrs2's and postsrsd's default). */
export const SRS_MAX_AGE_DAYS = 21;
const HASH_LENGTH = 4;
/** libsrs2 accepts any of these right after the SRS0/SRS1 tag; the rest of the address uses '='. */
const TAG_SEPARATORS = '=+-';

/** SRS0= / SRS1= prefix (or the + and - variants), case-insensitive. */
export function isSrsLocalPart(local: string): boolean {
  return /^srs[01][=+-]/i.test(local);
}

function splitAddress(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

function dayNumber(now: Date): number {
  return Math.floor(now.getTime() / DAY_MS) % TIME_SLOTS;
}

function stamp(now: Date): string {
  const day = dayNumber(now);
  return BASE32[(day >> 5) & 31] + BASE32[day & 31];
}

/** Days between the stamp and today, allowing for the 1024-day wrap; null when it is not a stamp. */
function stampAge(tt: string, now: Date): number | null {
  if (tt.length !== 2) return null;
  const hi = BASE32.indexOf(tt[0].toUpperCase());
  const lo = BASE32.indexOf(tt[1].toUpperCase());
  if (hi < 0 || lo < 0) return null;
  const then = hi * 32 + lo;
  return (dayNumber(now) - then + TIME_SLOTS) % TIME_SLOTS;
}

export function createSrs(secret: Buffer): Srs {
  if (secret.length === 0) throw new Error('SRS secret must not be empty');

  const hash = (...parts: string[]): string => {
    const hmac = createHmac('sha1', secret);
    for (const part of parts) hmac.update(part.toLowerCase(), 'utf8');
    return hmac.digest('base64').slice(0, HASH_LENGTH);
  };
  const hashMatches = (given: string, ...parts: string[]) => given.length === HASH_LENGTH && given.toLowerCase() === hash(...parts).toLowerCase();

  /** The parts of an SRS1 local part: hash, first forwarder's domain, and the SRS0 part after "SRS0" (it starts with the SRS0 tag's separator). */
  function parseSrs1(local: string): { hash: string; host: string; rest: string } | null {
    const body = local.slice(5);
    const a = body.indexOf('=');
    if (a < 0) return null;
    const b = body.indexOf('=', a + 1);
    if (b < 0) return null;
    const rest = body.slice(b + 1);
    const host = body.slice(a + 1, b);
    if (!host || rest.length < 2 || !TAG_SEPARATORS.includes(rest[0])) return null;
    return { hash: body.slice(0, a), host, rest };
  }

  return {
    forward(sender, aliasDomain, now) {
      if (sender === '') return '';
      const parts = splitAddress(sender);
      // Without a domain there is nothing to encode: such a sender cannot be rewritten meaningfully.
      if (!parts) return sender;
      const { local, domain } = parts;
      if (/^srs0[=+-]/i.test(local)) {
        // Already rewritten once: keep the original's part and name its forwarder, as libsrs2 does.
        const rest = local.slice(4);
        return `SRS1=${hash(domain, rest)}=${domain}=${rest}@${aliasDomain}`;
      }
      if (/^srs1[=+-]/i.test(local)) {
        const srs1 = parseSrs1(local);
        if (srs1) return `SRS1=${hash(srs1.host, srs1.rest)}=${srs1.host}=${srs1.rest}@${aliasDomain}`;
      }
      const tt = stamp(now);
      return `SRS0=${hash(tt, domain, local)}=${tt}=${domain}=${local}@${aliasDomain}`;
    },

    reverse(address, now) {
      const parts = splitAddress(address);
      if (!parts || !isSrsLocalPart(parts.local)) return null;
      const { local } = parts;
      if (local[3] === '1') {
        const srs1 = parseSrs1(local);
        if (!srs1) return { ok: false, reason: 'malformed SRS1 address' };
        if (!hashMatches(srs1.hash, srs1.host, srs1.rest)) return { ok: false, reason: 'SRS hash does not match' };
        return { ok: true, address: `SRS0${srs1.rest}@${srs1.host}` };
      }
      // SRS0<sep>HHHH=TT=domain=local; the original local part may itself contain '='.
      const fields = local.slice(5).split('=');
      if (fields.length < 4) return { ok: false, reason: 'malformed SRS0 address' };
      const [given, tt, domain] = fields;
      const origLocal = fields.slice(3).join('=');
      if (!domain || !origLocal) return { ok: false, reason: 'malformed SRS0 address' };
      const age = stampAge(tt, now);
      if (age === null) return { ok: false, reason: 'malformed SRS0 timestamp' };
      if (!hashMatches(given, tt, domain, origLocal)) return { ok: false, reason: 'SRS hash does not match' };
      if (age > SRS_MAX_AGE_DAYS) return { ok: false, reason: 'SRS address expired' };
      return { ok: true, address: `${origLocal}@${domain}` };
    },
  };
}
