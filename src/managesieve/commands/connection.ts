import type { CommandSpec } from '../session.js';
import { SieveNo } from '../session.js';

const ANY = ['notauth', 'auth'] as const;

/** CAPABILITY, NOOP, LOGOUT and STARTTLS (RFC 5804 sections 2.4, 2.2, 2.3, 2.11). */
export const connectionCommands: Record<string, CommandSpec> = {
  CAPABILITY: {
    states: ANY,
    async run(s, args) {
      args.end();
      s.send(s.capabilities());
      s.ok('Capability completed');
    },
  },
  NOOP: {
    states: ANY,
    async run(s, args) {
      const tag = args.optionalString('tag');
      args.end();
      // RFC 5804 2.13: a tag comes back in the TAG response code.
      s.ok('Done', tag === null ? undefined : `TAG ${JSON.stringify(tag)}`);
    },
  },
  LOGOUT: {
    states: ANY,
    async run(s, args) {
      args.end();
      s.ok('Logout completed');
      s.close();
    },
  },
  STARTTLS: {
    states: ['notauth'],
    async run(s, args) {
      args.end();
      if (s.conn.secure) throw new SieveNo('TLS is already active');
      if (!s.deps.tlsAvailable) throw new SieveNo('TLS is not available');
      s.ok('Begin TLS negotiation now');
      s.discardInput();
      if (!(await s.conn.upgrade())) { s.close(); return; }
      // RFC 5804 2.2: after the handshake the server sends its capabilities again.
      s.send(s.capabilities());
      s.ok('TLS negotiation successful');
    },
  },
};
