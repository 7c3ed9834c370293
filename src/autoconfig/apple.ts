import { createHash } from 'node:crypto';
import { xmlText, type ClientSettings } from './settings.js';

/** A UUID derived from a name, so the same mailbox's profile is the same profile each time it is downloaded. */
function nameUuid(name: string): string {
  const h = createHash('sha256').update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50; // version 5 layout (name-based)
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`.toUpperCase();
}

type PlistValue = string | number | boolean | PlistValue[] | { [key: string]: PlistValue };

function plist(value: PlistValue, indent: string): string[] {
  if (typeof value === 'string') return [`${indent}<string>${xmlText(value)}</string>`];
  if (typeof value === 'number') return [`${indent}<integer>${value}</integer>`];
  if (typeof value === 'boolean') return [`${indent}<${value}/>`];
  if (Array.isArray(value)) return [`${indent}<array>`, ...value.flatMap((v) => plist(v, indent + '  ')), `${indent}</array>`];
  return [`${indent}<dict>`, ...Object.entries(value).flatMap(([k, v]) => [`${indent}  <key>${xmlText(k)}</key>`, ...plist(v, indent + '  ')]), `${indent}</dict>`];
}

/**
 * An Apple configuration profile (`.mobileconfig`) with one `com.apple.mail.managed` payload: IMAP
 * on 993 and SMTP on 465, both with TLS and the full address as login. No password is inside:
 * the device asks for it when the profile is installed. A profile names one outgoing server, so
 * 587 is not in it.
 */
export function appleProfile(s: ClientSettings, address: string, displayName: string): string {
  const id = `mailstead.${s.server}.${address}`;
  const outgoing = s.submission.find((sub) => sub.socket === 'SSL') ?? s.submission[0];
  const mail: Record<string, PlistValue> = {
    EmailAccountDescription: address,
    EmailAccountName: displayName || address,
    EmailAccountType: 'EmailTypeIMAP',
    EmailAddress: address,
    IncomingMailServerAuthentication: 'EmailAuthPassword',
    IncomingMailServerHostName: s.server,
    IncomingMailServerPortNumber: s.imap.port,
    IncomingMailServerUseSSL: true,
    IncomingMailServerUsername: address,
    OutgoingMailServerAuthentication: 'EmailAuthPassword',
    OutgoingMailServerHostName: s.server,
    OutgoingMailServerPortNumber: outgoing.port,
    OutgoingMailServerUseSSL: true,
    OutgoingMailServerUsername: address,
    OutgoingPasswordSameAsIncomingPassword: true,
    PayloadDescription: `Mail account ${address}`,
    PayloadDisplayName: address,
    PayloadIdentifier: `${id}.mail`,
    PayloadType: 'com.apple.mail.managed',
    PayloadUUID: nameUuid(`${id}.mail`),
    PayloadVersion: 1,
  };
  const profile: Record<string, PlistValue> = {
    PayloadContent: [mail],
    PayloadDescription: `Sets up the mail account ${address} on ${s.server}`,
    PayloadDisplayName: `Mail: ${address}`,
    PayloadIdentifier: id,
    PayloadRemovalDisallowed: false,
    PayloadType: 'Configuration',
    PayloadUUID: nameUuid(id),
    PayloadVersion: 1,
  };
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    ...plist(profile, ''),
    '</plist>',
    '',
  ].join('\n');
}
