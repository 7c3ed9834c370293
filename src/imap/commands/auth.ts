import { ImapBad, ImapNo, type CommandSpec, type Session } from '../protocol/session.js';

const ANY = ['notauth', 'auth', 'selected'] as const;

/**
 * Checks a login against the lock-out first (DECISIONS.md section 13: a locked IP is refused even
 * with the right password), then the mailbox password. The attempt holds its place for the IP during
 * the check (mailboxes/lockout.ts says why), counts as a failure when the password is wrong, and is
 * forgotten when the login succeeds.
 */
async function logIn(s: Session, user: string, password: string): Promise<void> {
  const { lockout, logins } = s.store;
  const attempt = await lockout.begin(s.conn.ip);
  if (!attempt) throw new ImapNo('too many failed logins from this address; try again later', 'UNAVAILABLE');
  let login;
  try {
    login = await logins.verify(user, password);
  } catch (err) {
    await attempt.forget(); // our fault, not a failed login
    throw err;
  }
  if (!login) {
    await attempt.fail();
    throw new ImapNo('invalid credentials', 'AUTHENTICATIONFAILED');
  }
  await attempt.forget();
  s.authenticated(login);
  s.deps.logger.debug({ mailbox_id: login.mailboxId }, 'imap login');
}

/** Refuses logins on the STARTTLS port before STARTTLS (LOGINDISABLED). */
function requireTls(s: Session): void {
  if (s.conn.starttls && !s.conn.secure) throw new ImapNo('use STARTTLS first', 'PRIVACYREQUIRED');
}

/** PLAIN (RFC 4616): authzid NUL authcid NUL password; an authzid other than the authcid is refused. */
function plain(b64: string): { user: string; password: string } {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw new ImapBad('invalid base64');
  const parts = Buffer.from(b64, 'base64').toString('utf8').split('\0');
  if (parts.length !== 3) throw new ImapBad('malformed PLAIN response');
  const [authz, user, password] = parts;
  if (authz !== '' && authz.toLowerCase() !== user.toLowerCase()) throw new ImapNo('authorization identity not allowed', 'AUTHORIZATIONFAILED');
  return { user, password };
}

export const authCommands: Record<string, CommandSpec> = {
  CAPABILITY: {
    states: ANY,
    async run(s, tag, p) {
      p.end();
      s.send(`* CAPABILITY ${s.capabilities()}`);
      await s.finish(tag, 'CAPABILITY completed');
    },
  },
  NOOP: {
    states: ANY,
    async run(s, tag, p) {
      p.end();
      await s.finish(tag, 'NOOP completed');
    },
  },
  CHECK: {
    states: ['selected'],
    async run(s, tag, p) {
      p.end();
      await s.finish(tag, 'CHECK completed');
    },
  },
  LOGOUT: {
    states: [...ANY, 'logout'],
    async run(s, tag, p) {
      p.end();
      s.send('* BYE logging out');
      s.ok(tag, 'LOGOUT completed');
      s.close();
    },
  },
  STARTTLS: {
    states: ['notauth'],
    async run(s, tag, p) {
      p.end();
      if (!s.conn.starttls || s.conn.secure) throw new ImapBad('TLS is already on');
      s.ok(tag, 'begin TLS negotiation now');
      await s.conn.upgrade();
    },
  },
  LOGIN: {
    states: ['notauth'],
    async run(s, tag, p) {
      p.sp();
      const user = p.astring();
      p.sp();
      const password = p.astring();
      p.end();
      requireTls(s);
      await logIn(s, user, password);
      s.ok(tag, `[CAPABILITY ${s.capabilities()}] LOGIN completed`);
    },
  },
  AUTHENTICATE: {
    states: ['notauth'],
    async run(s, tag, p) {
      p.sp();
      const mech = p.atom().toUpperCase();
      let initial: string | null = null;
      if (p.maybeSp()) initial = p.rest().trim();
      p.end();
      if (mech !== 'PLAIN') throw new ImapNo('unsupported mechanism', 'CANNOT');
      requireTls(s);
      let response = initial;
      if (response === null) {
        s.send('+ ');
        response = (await s.waitLine()).trim();
      }
      if (response === '*') throw new ImapBad('authentication cancelled');
      const { user, password } = plain(response === '=' ? '' : response);
      await logIn(s, user, password);
      s.ok(tag, `[CAPABILITY ${s.capabilities()}] AUTHENTICATE completed`);
    },
  },
  ID: {
    states: ANY,
    async run(s, tag, p) {
      p.sp();
      // The client's fields are read for the grammar only; nothing depends on them.
      if (!p.take('NIL')) p.list(() => { const k = p.string(); p.sp(); if (!p.take('NIL')) p.string(); return k; });
      p.end();
      s.send('* ID ("name" "Mailstead" "vendor" "Mailstead")');
      await s.finish(tag, 'ID completed');
    },
  },
};
