import DKIM from 'nodemailer/lib/dkim';
import { createKeyCache } from '../signing/keys.js';

/**
 * DKIM signing of submitted mail (DECISIONS.md section 13: one DKIM-Signature, d=<From domain>,
 * s=mailstead, relaxed/relaxed, rsa-sha256) with each domain's key parsed once (signing/keys.ts):
 * mailauth's signer takes PEM text only and parses it at every signature, which cost more than the
 * RSA signature itself; nodemailer's signer takes a KeyObject.
 */
export function createSubmissionSigner(selector: string) {
  const keyFor = createKeyCache();

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
