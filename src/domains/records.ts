import { randomBytes } from 'node:crypto';

/** A DNS record we ask the customer to publish, as SPEC.md shows it. */
export interface PlannedRecord {
  type: 'MX' | 'TXT' | 'SRV' | 'CNAME';
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
 * The mail client records of DECISIONS.md section 21, all naming MAILSTEAD_HOSTNAME: SRV records
 * for IMAP with implicit TLS and for submission with implicit TLS and STARTTLS (RFC 6186, RFC
 * 8314), each as priority "0" and value `<weight> <port> <target>`, and the `autoconfig` and
 * `autodiscover` names Thunderbird and Outlook look up. Checked, but they do not decide `verified`.
 */
export function clientRecords(host: string, server: string): PlannedRecord[] {
  return [
    { type: 'SRV', name: `_imaps._tcp.${host}`, value: `1 993 ${server}`, priority: '0' },
    { type: 'SRV', name: `_submissions._tcp.${host}`, value: `1 465 ${server}`, priority: '0' },
    { type: 'SRV', name: `_submission._tcp.${host}`, value: `1 587 ${server}`, priority: '0' },
    { type: 'CNAME', name: `autoconfig.${host}`, value: server, priority: '-' },
    { type: 'CNAME', name: `autodiscover.${host}`, value: server, priority: '-' },
  ];
}

/**
 * The record set of one hostname, in a fixed order: DECISIONS.md section 4's two MX, the
 * verification TXT, SPF, DKIM and DMARC, then section 21's client records (`server` is
 * MAILSTEAD_HOSTNAME). Records are stored by position, so new ones only ever go at the end.
 */
export function planRecords(host: string, mxHosts: readonly [string, string], token: string, dkimPublicKey: string, server: string): PlannedRecord[] {
  return [
    { type: 'MX', name: host, value: mxHosts[0], priority: '10' },
    { type: 'MX', name: host, value: mxHosts[1], priority: '20' },
    { type: 'TXT', name: `_mailstead.${host}`, value: verificationValue(token), priority: '-' },
    { type: 'TXT', name: host, value: 'v=spf1 mx -all', priority: '-' },
    { type: 'TXT', name: `mailstead._domainkey.${host}`, value: dkimValue(dkimPublicKey), priority: '-' },
    { type: 'TXT', name: `_dmarc.${host}`, value: 'v=DMARC1; p=none', priority: '-' },
    ...clientRecords(host, server),
  ];
}
