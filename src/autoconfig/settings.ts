/**
 * What a mail client needs to set itself up for a hosted address (DECISIONS.md section 21): the
 * server is MAILSTEAD_HOSTNAME, IMAP on 993 with implicit TLS, submission on 465 with implicit TLS
 * and on 587 with STARTTLS, and the full address as the login. The ports are the standard ones a
 * client reaches from outside (the Docker image and most hosts map them onto the listeners), not the
 * listeners' own, which may be high ports behind that mapping.
 */
export interface ClientSettings {
  /** The domain the settings are for (a hosted hostname). */
  domain: string;
  /** The server every protocol names: MAILSTEAD_HOSTNAME. */
  server: string;
  imap: { port: 993; socket: 'SSL' };
  submission: ReadonlyArray<{ port: 465; socket: 'SSL' } | { port: 587; socket: 'STARTTLS' }>;
}

/** The settings for one hosted domain. */
export function clientSettings(domain: string, server: string): ClientSettings {
  return {
    domain,
    server,
    imap: { port: 993, socket: 'SSL' },
    submission: [{ port: 465, socket: 'SSL' }, { port: 587, socket: 'STARTTLS' }],
  };
}

/** Escapes text for an XML element or attribute. */
export const xmlText = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
