import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

/** The selector of every DKIM key of ours (DECISIONS.md section 4: `mailstead._domainkey.<host>`). */
export const DKIM_SELECTOR = 'mailstead';

/** A DKIM key pair: the private key as PKCS#8 PEM (kept for signing), the public key as base64 DER SPKI (published). */
export interface DkimKeyPair {
  privateKeyPem: string;
  publicKeyBase64: string;
}

/** Generates an RSA-2048 DKIM key pair on the thread pool, so the event loop keeps serving. */
export async function generateDkimKeyPair(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey as unknown as string, publicKeyBase64: (publicKey as unknown as Buffer).toString('base64') };
}
