import { createPrivateKey, type KeyObject } from 'node:crypto';
import DKIM from 'nodemailer/lib/dkim';

/**
 * DKIM signing of submitted mail (DECISIONS.md section 13: one DKIM-Signature, d=<From domain>,
 * s=mailstead, relaxed/relaxed, rsa-sha256) with each domain's key parsed once. mailauth's signer
 * (outbound/sign.ts, which forwards keep for their ARC sets) takes PEM text only and parses it at
 * every signature, which cost more than the RSA signature itself; nodemailer's signer takes a
 * KeyObject. The key is looked up per message, and a changed PEM (a rotation) is parsed again.
 */
export function createSubmissionSigner(selector: string) {
  const keys = new Map<string, { pem: string; key: KeyObject }>();

  function keyFor(domain: string, pem: string): KeyObject {
    const known = keys.get(domain);
    if (known && known.pem === pem) return known.key;
    const key = createPrivateKey({ key: pem, format: 'pem' });
    keys.set(domain, { pem, key });
    return key;
  }

  return async function sign(raw: Buffer, domain: string, pem: string): Promise<Buffer> {
    const signer = new DKIM({ domainName: domain, keySelector: selector, privateKey: keyFor(domain, pem) });
    const chunks: Buffer[] = [];
    for await (const chunk of signer.sign(raw)) chunks.push(chunk as Buffer);
    const signed = Buffer.concat(chunks);
    // nodemailer leaves the signature out when the key cannot sign: never send such a message unsigned.
    if (!/^DKIM-Signature:/i.test(signed.subarray(0, 16).toString('latin1'))) throw new Error(`DKIM signing failed for ${domain}`);
    return signed;
  };
}
export type SubmissionSigner = ReturnType<typeof createSubmissionSigner>;
