import type { Token } from '../parser.js';
import type { CommandSpec, Session } from '../session.js';
import { SieveNo } from '../session.js';
import { utf8 } from '../wire.js';

/** SASL PLAIN (RFC 4616): authzid NUL authcid NUL password; an authzid other than the authcid is refused. */
function plain(b64: string): { user: string; password: string } | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return null;
  const parts = Buffer.from(b64, 'base64').toString('utf8').split('\0');
  if (parts.length !== 3) return null;
  const [authz, user, password] = parts as [string, string, string];
  if (authz !== '' && authz.toLowerCase() !== user.toLowerCase()) return null;
  return { user, password };
}

/**
 * Checks a login against the lock-out of DECISIONS.md section 13 first (shared with IMAP and
 * submission through the database), then the mailbox password, as imap/auth.ts does.
 */
async function logIn(s: Session, b64: string): Promise<void> {
  const creds = plain(b64);
  if (!creds) throw new SieveNo('Authentication failed: malformed PLAIN response', 'SASL');
  const attempt = await s.deps.lockout.begin(s.conn.ip);
  if (!attempt) throw new SieveNo('too many failed logins from this address; try again later', 'TRYLATER');
  let login;
  try {
    login = await s.deps.logins.verify(creds.user, creds.password);
  } catch (err) {
    await attempt.forget();
    throw err;
  }
  if (!login) {
    await attempt.fail();
    throw new SieveNo('Authentication failed', 'SASL');
  }
  await attempt.forget();
  s.login = login;
  s.state = 'auth';
  s.deps.logger.debug({ mailbox_id: login.mailboxId }, 'managesieve login');
  s.ok('Authenticated');
}

/** The client's answer to the server's empty challenge: one string, or "*" to cancel. */
function saslResponse(tokens: Token[]): string | null {
  if (tokens.length !== 1) return null;
  const t = tokens[0]!;
  if (t.kind === 'atom') return t.text === '*' ? '*' : null;
  return utf8(t.bytes);
}

/** AUTHENTICATE "PLAIN" and UNAUTHENTICATE (RFC 5804 sections 2.1, 2.14). */
export const authCommands: Record<string, CommandSpec> = {
  AUTHENTICATE: {
    states: ['notauth'],
    async run(s, args) {
      const mechanism = args.string('mechanism').toUpperCase();
      const initial = args.optionalString('initial response');
      args.end();
      if (!s.conn.secure && s.deps.tlsAvailable) throw new SieveNo('use STARTTLS first', 'ENCRYPT-NEEDED');
      if (mechanism !== 'PLAIN') throw new SieveNo('only PLAIN is offered', 'SASL');
      const finish = async (b64: string) => {
        try {
          await logIn(s, b64);
        } catch (err) {
          if (!(err instanceof SieveNo)) throw err;
          s.no(err.message, err.code);
        }
      };
      if (initial !== null) { await finish(initial); return; }
      s.send('""\r\n'); // the empty challenge of PLAIN
      s.saslWaiting = async (tokens) => {
        const answer = saslResponse(tokens);
        if (answer === '*') s.no('Authentication cancelled');
        else if (answer === null) s.no('Authentication failed: malformed response', 'SASL');
        else await finish(answer);
      };
    },
  },
  UNAUTHENTICATE: {
    states: ['auth'],
    async run(s, args) {
      args.end();
      s.login = null;
      s.state = 'notauth';
      s.ok('Unauthenticate completed');
    },
  },
};
