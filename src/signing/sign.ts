import type { DNSResolver } from 'mailauth';
import { arc as verifyArc } from 'mailauth/lib/arc/index.js';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { arcSet, digest, dkimSignature, withPrepended, type SigningKey } from './signatures.js';
import { headerEnd, splitHeaderBlock } from '../message/headers.js';

export type { SigningKey } from './signatures.js';

/** The chain validation status an ARC sealer records (RFC 8617 section 4.1.3). */
export type ChainValidation = 'none' | 'pass' | 'fail';

export interface ForwardSigningOptions {
  /** Our authserv-id (the host name), the first word of ARC-Authentication-Results. */
  authservId: string;
  /** The results of our inbound checks in Authentication-Results form, e.g. `spf=pass smtp.mailfrom=a.example; dkim=pass header.d=a.example`. */
  authResults: string;
  /** The validation of the chain the message arrived with, when the caller knows it (see `existingChainValidation`). */
  cv?: ChainValidation;
  /** DNS for verifying an arriving chain when neither `cv` nor an `arc=` result in `authResults` says how it went. */
  resolver?: DNSResolver;
  /** Signature time (t=); now when absent. */
  now?: Date;
}

/** RFC 8617 section 4.2.1: a chain longer than 50 sets is invalid, so a sealer stops adding to it. */
const MAX_ARC_INSTANCES = 50;

/** What the ARC-Seal headers of the header block say: the highest instance, its cv, and whether the sets are complete. */
function readArcChain(raw: Buffer): { highest: number; lastCv: string | null; intact: boolean } {
  const end = headerEnd(raw);
  const { lines } = splitHeaderBlock(end ? raw.subarray(0, end.headEnd) : raw);
  const sets = new Map<number, { seal: number; sig: number; aar: number; cv: string | null }>();
  let intact = true;
  for (const { key, line } of lines) {
    if (key !== 'arc-seal' && key !== 'arc-message-signature' && key !== 'arc-authentication-results') continue;
    const instance = /(?:^|[:;\s])i\s*=\s*(\d+)/i.exec(line.replace(/\r?\n/g, ''));
    if (!instance) { intact = false; continue; }
    const i = Number(instance[1]);
    const set = sets.get(i) ?? { seal: 0, sig: 0, aar: 0, cv: null };
    if (key === 'arc-seal') {
      set.seal++;
      set.cv = /(?:^|[;\s])cv\s*=\s*([a-z]+)/i.exec(line)?.[1]?.toLowerCase() ?? null;
    } else if (key === 'arc-message-signature') set.sig++;
    else set.aar++;
    sets.set(i, set);
  }
  const highest = Math.max(0, ...sets.keys());
  for (let i = 1; i <= highest; i++) {
    const set = sets.get(i);
    if (!set || set.seal !== 1 || set.sig !== 1 || set.aar !== 1) intact = false;
  }
  return { highest, lastCv: sets.get(highest)?.cv ?? null, intact };
}

/** The `arc=` verdict inside Authentication-Results text, if our inbound checks recorded one. */
function arcVerdict(authResults: string): ChainValidation | null {
  const m = /(?:^|;)\s*arc\s*=\s*([a-z]+)/i.exec(authResults);
  if (!m) return null;
  const v = m[1].toLowerCase();
  return v === 'pass' ? 'pass' : v === 'none' ? null : 'fail';
}

/** Verifies the arriving chain's seals (DNS lookups of each sealer's key). */
async function verifyChain(raw: Buffer, resolver: DNSResolver | undefined): Promise<ChainValidation> {
  const verified = await dkimVerify(raw, { resolver }) as unknown as { arc?: Parameters<typeof verifyArc>[0] };
  if (!verified.arc) return 'fail';
  const result = await verifyArc(verified.arc, { resolver });
  return result.status.result === 'pass' ? 'pass' : 'fail';
}

/** Writes prepended header lines with the message's own line ending, so a bare-LF message stays consistent. */
function inLineEndingsOf(raw: Buffer, headers: string): Buffer {
  const firstLf = raw.indexOf(0x0a);
  const crlf = firstLf <= 0 || raw[firstLf - 1] === 0x0d;
  return Buffer.from(crlf ? headers : headers.replace(/\r\n/g, '\n'), 'latin1');
}

/** One DKIM-Signature, prepended; the message's own bytes follow unchanged. */
export async function signDkim(raw: Buffer, key: SigningKey, signTime = new Date()): Promise<Buffer> {
  const header = await dkimSignature(digest(raw), key, signTime);
  return Buffer.concat([inLineEndingsOf(raw, `${header}\r\n`), raw]);
}

/**
 * The ARC set (ARC-Seal, ARC-Message-Signature, ARC-Authentication-Results; instance = arriving
 * chain + 1) on top of a DKIM-Signature, both d=key.domain s=key.selector, prepended to the message
 * whose bytes follow unchanged. The DKIM signature is made first so the ARC-Message-Signature
 * covers it too. A chain that already failed (its last seal says cv=fail) or has 50 sets gets no
 * further set (RFC 8617 5.1.1 and 4.2.1): such a copy carries the DKIM signature only. A chain
 * whose sets are incomplete or duplicated is sealed with cv=fail. The message is parsed and its
 * body hashed once for the three signatures.
 */
export async function signForward(raw: Buffer, key: SigningKey, opts: ForwardSigningOptions): Promise<Buffer> {
  const signTime = opts.now ?? new Date();
  const d = digest(raw);
  const dkimField = `${await dkimSignature(d, key, signTime)}\r\n`;
  const dkim = inLineEndingsOf(raw, dkimField);

  const chain = readArcChain(raw);
  if (chain.highest >= MAX_ARC_INSTANCES || chain.lastCv === 'fail') return Buffer.concat([dkim, raw]);
  const cv: ChainValidation = chain.highest === 0
    ? 'none'
    : !chain.intact ? 'fail' : opts.cv ?? arcVerdict(opts.authResults) ?? await verifyChain(raw, opts.resolver);

  const results = opts.authResults.trim().replace(/^;\s*/, '');
  const set = await arcSet(withPrepended(d, dkimField), key, {
    instance: chain.highest + 1, cv, authResults: `${opts.authservId}; ${results || 'none'}`, signTime,
  });
  return Buffer.concat([inLineEndingsOf(raw, set), dkim, raw]);
}
