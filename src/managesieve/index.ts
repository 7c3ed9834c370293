import type { Core } from '../core.js';
import type { TlsSource } from '../imap/protocol/server.js';
import { listenUnlessPrivileged } from '../listen.js';
import { createLockout } from '../mailboxes/lockout.js';
import { createMailboxLogins } from '../mailboxes/logins.js';
import { SIEVE_EXTENSIONS } from '../sieve/index.js';
import { MAX_REDIRECTS } from '../sieve-store/limits.js';
import type { SieveStore } from '../sieve-store/store.js';
import { authCommands } from './commands/auth.js';
import { connectionCommands } from './commands/connection.js';
import { scriptCommands } from './commands/scripts.js';
import { createManageSieveListener } from './server.js';

const COMMANDS = { ...connectionCommands, ...authCommands, ...scriptCommands };

/** The capability lines (RFC 5804 1.7): PLAIN once TLS is up, STARTTLS until then. */
function capabilities(secure: boolean): string {
  const lines = [
    '"IMPLEMENTATION" "Mailstead"',
    `"SIEVE" "${SIEVE_EXTENSIONS.join(' ')}"`,
    `"SASL" "${secure ? 'PLAIN' : ''}"`,
    ...(secure ? [] : ['"STARTTLS"']),
    `"MAXREDIRECTS" "${MAX_REDIRECTS}"`,
    '"UNAUTHENTICATE"',
    '"VERSION" "1.0"',
  ];
  return lines.map((l) => `${l}\r\n`).join('');
}

/**
 * ManageSieve (RFC 5804, DECISIONS.md section 19) on MAILSTEAD_MANAGESIEVE_PORT: STARTTLS with the
 * certificate of every TLS listener, AUTHENTICATE PLAIN with the mailbox address and password under
 * the login lock-out that IMAP and submission share, then the script commands over the same store
 * as the REST routes.
 */
export function installManageSieve(core: Core, deps: { tls: TlsSource; scripts: SieveStore }) {
  const { db, clock, config, logger } = core;
  const port = config.managesievePort;
  const listener = port === null ? null : createManageSieveListener({
    host: config.smtpHost, port, tls: deps.tls, commands: COMMANDS, capabilities,
    deps: { scripts: deps.scripts, logins: createMailboxLogins({ db }), lockout: createLockout({ db, clock }), logger, tlsAvailable: true },
  });
  return {
    /** Listens; resolves with the real port, or null when disabled. */
    async listen(): Promise<number | null> {
      if (!listener || port === null) return null;
      return listenUnlessPrivileged('ManageSieve', 'MAILSTEAD_MANAGESIEVE_PORT', port, logger, () => listener.listen());
    },
    close: async () => { await listener?.close(); },
  };
}
