import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from 'smtp-server';
import { installLineLimit } from '../smtp/line-limit.js';
import { coalesceReplies } from '../smtp/coalesce.js';
import { drainSmtp, listenSmtp } from '../smtp/lifecycle.js';
import type { Logger } from '../logger.js';
import { createConnectionLimits } from '../smtp/limits.js';
import type { SmtpReply } from '../smtp-replies.js';
import type { CertificateSource } from '../tls/index.js';
import { AUTH_REQUIRED_TEXT, LOCAL_ERROR, TOO_BIG, TOO_MANY_CONNECTIONS } from './replies.js';
import { markSubmissionServer } from './wire.js';

/** The limits of a submission listener. */
export interface SubmissionLimits {
  /** SIZE, as on port 25 (25 MB). */
  maxSize: number;
  maxClients: number;
  maxPerAddress: number;
  idleTimeoutMs: number;
  closeGraceMs: number;
}

export const SUBMISSION_LIMITS: SubmissionLimits = {
  maxSize: 25 * 1024 * 1024,
  maxClients: 200,
  maxPerAddress: 20,
  idleTimeoutMs: 120_000,
  closeGraceMs: 8_000,
};

/** What a listener does with each step of a session; each answers null (or the login, or the 250 text) to go on, or the reply that refuses. */
export interface SubmissionHandlers {
  auth(auth: SMTPServerAuthentication, session: SMTPServerSession): Promise<{ user: unknown } | SmtpReply>;
  mailFrom(address: string, session: SMTPServerSession): Promise<SmtpReply | null>;
  rcptTo(address: string, session: SMTPServerSession): Promise<SmtpReply | null>;
  /** The whole message (at most SIZE bytes); answers the 250 text or the refusal. */
  data(raw: Buffer, session: SMTPServerSession): Promise<string | SmtpReply>;
}

/**
 * One submission listener (RFC 6409, RFC 8314): `implicitTls` for port 465, else STARTTLS on the
 * plain port with AUTH only after it (wire.ts). AUTH PLAIN and LOGIN are the only mechanisms, every
 * transaction needs a login, and the certificate is the one of every TLS listener.
 */
export function createSubmissionListener(deps: {
  host: string; port: number; implicitTls: boolean; hostname: string; tls: CertificateSource; logger: Logger;
  limits: SubmissionLimits; handlers: SubmissionHandlers;
}) {
  installLineLimit();
  const { limits, handlers, logger } = deps;
  const perAddress = createConnectionLimits(limits.maxPerAddress);
  const fail = (cb: (err?: Error | null) => void) => (err: unknown) => {
    logger.error({ err }, 'submission handler failed');
    cb(LOCAL_ERROR());
  };

  const server: SMTPServer = new SMTPServer({
    name: deps.hostname,
    banner: 'Mailstead submission',
    heloResponse: '%s Hello %s',
    secure: deps.implicitTls,
    size: limits.maxSize,
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    authRequiredMessage: AUTH_REQUIRED_TEXT,
    allowInsecureAuth: false,
    disabledCommands: deps.implicitTls ? ['STARTTLS'] : [],
    ...deps.tls.serverOptions(),
    maxClients: limits.maxClients,
    socketTimeout: limits.idleTimeoutMs,
    closeTimeout: limits.closeGraceMs + 1_000,
    disableReverseLookup: true,
    logger: false,

    onConnect(session, callback) {
      if (!perAddress.admit(session.id, session.remoteAddress)) return callback(TOO_MANY_CONNECTIONS());
      callback();
    },

    onClose(session) {
      perAddress.release(session.id, session.remoteAddress);
    },

    onAuth(auth, session, callback) {
      handlers.auth(auth, session).then((r) => {
        if (r instanceof Error) {
          callback(r);
          // 421 closes the channel (RFC 5321 section 3.8): a locked-out client gets nothing more.
          if (r.responseCode === 421) setImmediate(() => connectionOf(session)?.close());
          return;
        }
        callback(null, r as { user: unknown });
      }, fail(callback));
    },

    onMailFrom(address, session, callback) {
      handlers.mailFrom(address.address, session).then((r) => callback(r ?? undefined), fail(callback));
    },

    onRcptTo(address, session, callback) {
      handlers.rcptTo(address.address, session).then((r) => callback(r ?? undefined), fail(callback));
    },

    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => { if (!stream.sizeExceeded) chunks.push(c); });
      stream.once('end', () => {
        if (stream.sizeExceeded) {
          callback(TOO_BIG(limits.maxSize));
          return;
        }
        inFlight++;
        handlers.data(Buffer.concat(chunks), session).then(
          (r) => (r instanceof Error ? callback(r) : callback(null, r)),
          fail(callback),
        ).finally(() => {
          inFlight--;
          if (inFlight === 0) drained?.();
        });
      });
    },
  });
  markSubmissionServer(server);
  server.on('error', (err) => logger.warn({ err }, 'submission error'));
  // A pipelining client's MAIL, RCPT and DATA are answered in one write, as on port 25 (smtp/coalesce.ts).
  // With implicit TLS the TLS socket is the one written to: one TLS record then instead of three.
  server.server.on(deps.implicitTls ? 'secureConnection' : 'connection', coalesceReplies);
  const unsubscribeTls = deps.tls.onSwap(({ key, cert }) => server.updateSecureContext({ key, cert }));

  function connectionOf(session: SMTPServerSession): { close(): void } | undefined {
    for (const c of server.connections as Set<{ session: SMTPServerSession; close(): void }>) if (c.session === session) return c;
    return undefined;
  }

  // Messages between their last byte and their 250: a stop lets them commit and answer first.
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const waitForInFlight = () => inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, limits.closeGraceMs);
    drained = () => { clearTimeout(timer); resolve(); };
  });

  let closing: Promise<void> | null = null;
  return {
    /** Listens and resolves with the real port (the configured one may be 0). */
    listen: () => listenSmtp(server, deps.port, deps.host),
    /** Stops accepting; messages being committed finish (up to closeGraceMs), then open sessions get 421 and are closed. */
    close(): Promise<void> {
      closing ??= (async () => {
        unsubscribeTls();
        await drainSmtp(server, waitForInFlight);
      })();
      return closing;
    },
  };
}
export type SubmissionListener = ReturnType<typeof createSubmissionListener>;
