import { randomBytes } from 'node:crypto';

/** A DNS record we ask the customer to publish, as SPEC.md shows it. */
export interface PlannedRecord {
  type: 'MX' | 'TXT';
  name: string;
  value: string;
  priority: string;
}

/** A new verification token: 32 random hex characters. */
export const newVerificationToken = () => randomBytes(16).toString('hex');

/** The TXT value that proves ownership. */
export const verificationValue = (token: string) => `mailstead-verification=${token}`;

/** The DKIM TXT value for a base64 SubjectPublicKeyInfo (DER). */
export const dkimValue = (publicKeyBase64: string) => `v=DKIM1; k=rsa; p=${publicKeyBase64}`;

/**
 * The record set of DECISIONS.md section 4 for one hostname, in a fixed order: two MX, the
 * verification TXT, SPF, DKIM and DMARC.
 */
export function planRecords(host: string, mxHosts: readonly [string, string], token: string, dkimPublicKey: string): PlannedRecord[] {
  return [
    { type: 'MX', name: host, value: mxHosts[0], priority: '10' },
    { type: 'MX', name: host, value: mxHosts[1], priority: '20' },
    { type: 'TXT', name: `_mailstead.${host}`, value: verificationValue(token), priority: '-' },
    { type: 'TXT', name: host, value: 'v=spf1 mx -all', priority: '-' },
    { type: 'TXT', name: `mailstead._domainkey.${host}`, value: dkimValue(dkimPublicKey), priority: '-' },
    { type: 'TXT', name: `_dmarc.${host}`, value: 'v=DMARC1; p=none', priority: '-' },
  ];
}
