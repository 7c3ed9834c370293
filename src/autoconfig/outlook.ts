import { XMLParser } from 'fast-xml-parser';
import { xmlText, type ClientSettings } from './settings.js';

const RESPONSE_NS = 'http://schemas.microsoft.com/exchange/autodiscover/responseschema/2006';
const OUTLOOK_NS = 'http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a';

// Entities and DTDs are not expanded (no entity-expansion or external-entity tricks); namespaces are ignored.
const parser = new XMLParser({ removeNSPrefix: true, processEntities: false, ignoreDeclaration: true, parseTagValue: false });

/**
 * The address of an Outlook autodiscover request (`<Autodiscover><Request><EMailAddress>`), or
 * null when the body is not such a request.
 */
export function requestedAddress(body: string): string | null {
  let doc: any;
  try {
    doc = parser.parse(body, true);
  } catch {
    return null;
  }
  const address = doc?.Autodiscover?.Request?.EMailAddress;
  return typeof address === 'string' ? address.trim() : null;
}

/**
 * The "POX" answer Outlook reads (MS-OXDISCO, outlook response schema 2006a): an email account
 * with one IMAP protocol and two SMTP ones, 465 with SSL first (Outlook takes the first it can
 * use), then 587 with STARTTLS (`Encryption` TLS).
 */
export function outlookResponse(s: ClientSettings, address: string): string {
  const protocol = (type: string, port: number, encryption: 'SSL' | 'TLS') => [
    '      <Protocol>',
    `        <Type>${type}</Type>`,
    `        <Server>${xmlText(s.server)}</Server>`,
    `        <Port>${port}</Port>`,
    `        <LoginName>${xmlText(address)}</LoginName>`,
    '        <DomainRequired>off</DomainRequired>',
    '        <SPA>off</SPA>',
    `        <SSL>on</SSL>`,
    `        <Encryption>${encryption}</Encryption>`,
    '        <AuthRequired>on</AuthRequired>',
    '      </Protocol>',
  ];
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    `<Autodiscover xmlns="${RESPONSE_NS}">`,
    `  <Response xmlns="${OUTLOOK_NS}">`,
    '    <Account>',
    '      <AccountType>email</AccountType>',
    '      <Action>settings</Action>',
    ...protocol('IMAP', s.imap.port, 'SSL'),
    ...s.submission.flatMap((sub) => protocol('SMTP', sub.port, sub.socket === 'SSL' ? 'SSL' : 'TLS')),
    '    </Account>',
    '  </Response>',
    '</Autodiscover>',
    '',
  ].join('\n');
}
