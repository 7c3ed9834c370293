import { sign as cryptoSign, type KeyObject } from 'node:crypto';
import { getARChain } from 'mailauth/lib/arc/index.js';
import { generateCanonicalizedHeader } from 'mailauth/lib/dkim/header/index.js';
import { defaultARCFieldNames, formatRelaxedLine, formatSignatureHeaderLine, getSigningHeaderLines, parseHeaders, type ParsedHeaders } from 'mailauth/lib/tools.js';
import { relaxedBodyHash } from './body-hash.js';

/**
 * DKIM-Signature, ARC-Message-Signature and ARC-Seal (relaxed/relaxed, rsa-sha256) made with
 * mailauth's own canonicalisation and formatting helpers, as its signer and sealer make them, but
 * with a parsed KeyObject: mailauth (4.13 and every later version) takes the key as PEM text and
 * parses it again for each signature, which costs more than the signature. One pass over the
 * message gives the header fields and the body hash that all three signatures share.
 */

/** A signing domain's key: d=, s= and the parsed private key (see keys.ts). */
export interface SigningKey { domain: string; selector: string; privateKey: KeyObject }

/** The header fields of a message as mailauth parses them, and its relaxed SHA-256 body hash. */
export interface Digest { headers: ParsedHeaders; bodyHash: string }

/**
 * An RSA-SHA256 signature on libuv's thread pool: the main thread goes on serving SMTP while the
 * RSA operation (most of a signature's cost) runs beside it.
 */
export function rsaSha256(data: Buffer, key: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) => cryptoSign('rsa-sha256', data, key, (err, sig) => (err ? reject(err) : resolve(sig))));
}

/** Where the header block ends: the byte after the blank line (bare-LF or CRLF), or the end. */
function bodyStart(raw: Buffer): number {
  const lf = raw.indexOf('\n\n');
  const crlf = raw.indexOf('\n\r\n');
  if (lf < 0 && crlf < 0) return raw.length;
  return lf >= 0 && (crlf < 0 || lf < crlf) ? lf + 2 : crlf + 3;
}

/** Parses the header fields and hashes the body once (a message without a body hashes as empty). */
export function digest(raw: Buffer): Digest {
  const start = bodyStart(raw);
  return { headers: parseHeaders(raw.subarray(0, start)), bodyHash: relaxedBodyHash(raw.subarray(start)) };
}

/** The digest of the same message with header fields prepended (folded with CRLF), without another pass over its body. */
export function withPrepended(d: Digest, fields: string): Digest {
  const added = parseHeaders(Buffer.from(fields, 'latin1')).parsed;
  return { headers: { parsed: [...added, ...d.headers.parsed], original: d.headers.original }, bodyHash: d.bodyHash };
}

/** A DKIM-Signature (v=1, mailauth's signed field list, t=), folded, without a line break at its end. */
export async function dkimSignature(d: Digest, key: SigningKey, signTime: Date): Promise<string> {
  const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', getSigningHeaderLines(d.headers.parsed), {
    signingDomain: key.domain, selector: key.selector, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed', signTime, bodyHash: d.bodyHash,
  });
  dkimHeaderOpts.b = (await rsaSha256(canonicalizedHeader, key.privateKey)).toString('base64');
  return formatSignatureHeaderLine('DKIM', dkimHeaderOpts, true);
}

export interface ArcSetOptions {
  /** The instance of the new set (the arriving chain's highest + 1). */
  instance: number;
  /** The arriving chain's validation; with `pass` the seal covers every earlier set (RFC 8617 5.1.1). */
  cv: 'none' | 'pass' | 'fail';
  /** The ARC-Authentication-Results payload: authserv-id and results. */
  authResults: string;
  signTime: Date;
}

/**
 * An ARC set (RFC 8617) for the message of `d`: ARC-Seal, ARC-Message-Signature and
 * ARC-Authentication-Results, in that order, each ending in CRLF. The AMS signs mailauth's ARC
 * field list (its DKIM list with DKIM-Signature and Delivered-To); the seal covers the earlier
 * sets' fields (when cv=pass), then this set's AAR and AMS, as mailauth's sealer does.
 */
export async function arcSet(d: Digest, key: SigningKey, o: ArcSetOptions): Promise<string> {
  const i = o.instance;
  let cv = o.cv;
  let chain: ReturnType<typeof getARChain> = false;
  if (cv === 'pass') {
    // A chain said to pass that mailauth cannot read as one (a seal's cv out of order, a set twice) is sealed as failed.
    try { chain = getARChain(d.headers); } catch { chain = false; }
    if (!chain) cv = 'fail';
  }
  const aar = `ARC-Authentication-Results: i=${i}; ${o.authResults}`;
  const ams = generateCanonicalizedHeader('ARC', getSigningHeaderLines(d.headers.parsed, defaultARCFieldNames), {
    signingDomain: key.domain, selector: key.selector, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed', instance: i,
    signTime: o.signTime, bodyHash: d.bodyHash,
  });
  ams.dkimHeaderOpts.b = (await rsaSha256(ams.canonicalizedHeader, key.privateKey)).toString('base64');
  const amsLine = formatSignatureHeaderLine('ARC', ams.dkimHeaderOpts, true);

  const chunks: Buffer[] = [];
  if (chain) {
    for (const link of chain) {
      for (const field of ['arc-authentication-results', 'arc-message-signature', 'arc-seal'] as const) {
        const original = link[field]?.original;
        if (original === undefined) throw new Error(`ARC set i=${link.i} has no ${field}`);
        chunks.push(formatRelaxedLine(original, '\r\n'));
      }
    }
  }
  chunks.push(formatRelaxedLine(aar, '\r\n'), formatRelaxedLine(amsLine, '\r\n'));
  // mailauth rounds the seal's t= (and floors the signatures'): kept, so its seals and ours read alike.
  const tags: Record<string, unknown> = { i, a: 'rsa-sha256', s: key.selector, d: key.domain, cv, t: Math.round(o.signTime.getTime() / 1000) };
  // The seal is signed over its own field with an empty b=; a placeholder b= keeps the folding of the final field.
  const unsigned = formatSignatureHeaderLine('AS', { b: 'a'.repeat(73), ...tags }, true);
  chunks.push(Buffer.from(formatRelaxedLine(unsigned).toString('latin1').replace(/([;:\s]+b=)[^;]+/, '$1'), 'latin1'));
  tags.b = (await rsaSha256(Buffer.concat(chunks), key.privateKey)).toString('base64');
  return `${formatSignatureHeaderLine('AS', tags, true)}\r\n${amsLine}\r\n${aar}\r\n`;
}
