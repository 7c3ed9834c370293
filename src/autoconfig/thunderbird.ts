import { xmlText, type ClientSettings } from './settings.js';

/**
 * Thunderbird's clientConfig version 1.1 (the format of its ISPDB and of
 * `/.well-known/autoconfig/mail/config-v1.1.xml`). `%EMAILADDRESS%` is Thunderbird's placeholder
 * for the address the user typed, which it puts in before it logs in: the full address is the login.
 */
export function thunderbirdConfig(s: ClientSettings): string {
  const server = (tag: 'incomingServer' | 'outgoingServer', type: string, port: number, socket: string) => [
    `    <${tag} type="${type}">`,
    `      <hostname>${xmlText(s.server)}</hostname>`,
    `      <port>${port}</port>`,
    `      <socketType>${socket}</socketType>`,
    '      <authentication>password-cleartext</authentication>',
    '      <username>%EMAILADDRESS%</username>',
    `    </${tag}>`,
  ];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<clientConfig version="1.1">',
    `  <emailProvider id="${xmlText(s.domain)}">`,
    `    <domain>${xmlText(s.domain)}</domain>`,
    `    <displayName>${xmlText(s.domain)}</displayName>`,
    `    <displayShortName>${xmlText(s.domain)}</displayShortName>`,
    ...server('incomingServer', 'imap', s.imap.port, s.imap.socket),
    ...s.submission.flatMap((sub) => server('outgoingServer', 'smtp', sub.port, sub.socket)),
    '  </emailProvider>',
    '</clientConfig>',
    '',
  ].join('\n');
}
