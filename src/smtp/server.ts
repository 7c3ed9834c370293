import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SMTPServer, type SMTPServerEnvelope, type SMTPServerSession } from 'smtp-server';
import { drainSmtp, listenSmtp } from './lifecycle.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { RAW_IN_ROW_BYTES } from '../ingest/accept.js';
import type { RawDelivery } from '../inbound/types.js';
import type { Logger } from '../logger.js';
import type { PreAcceptancePolicy } from '../spam/policy/types.js';
import type { CertificateSource } from '../tls/index.js';
import { receiveMessage } from './data.js';
import { coalesceReplies } from './coalesce.js';
import { installDataScan } from './data-scan.js';
import { createReverseResolver } from '../mailauth/dns.js';
import { createErrorLimit, type ErrorLimits } from './error-limit.js';
import { installExpnReply } from './expn.js';
import { installLineLimit } from './line-limit.js';
import { createConnectionLimits } from './limits.js';
import type { Deliverable, RecipientCheck } from './recipients.js';
import { BACKLOG_FULL, NEEDS_SMTPUTF8, TOO_MANY_CONNECTIONS, UNSUPPORTED_PARAMETER, type SmtpReply } from '../smtp-replies.js';
import { installWireAsciiCheck, sentNonAscii } from './wire-ascii.js';

/** The limits of the ingress (DECISIONS.md section 7); tests and benchmarks may tighten them. */
export interface SmtpLimits {
  /** SIZE advertised and enforced (552 past it). */
  maxSize: number;
  maxRecipients: number;
  /** Concurrent connections in all. */
  maxClients: number;
  /** Concurrent connections from one client address. */
  maxPerAddress: number;
  /** Idle time allowed while the client owes us a command or data. */
  idleTimeoutMs: number;
  /** Time allowed for one whole DATA phase. */
  dataTimeoutMs: number;
  /** Messages up to this size are kept in memory; larger ones are spooled to `<dataDir>/tmp`. */
  memoryLimit: number;
  /** How long a stop waits for messages in flight before it cuts the remaining sessions. */
  closeGraceMs: number;
}

/** Everything a listener is limited by. */
export type ListenerLimits = SmtpLimits & ErrorLimits;

/** The defaults: 25 MB, 100 recipients, Postfix-like timeouts, shutdown inside the 10 s budget. */
export const DEFAULT_LIMITS: ListenerLimits = {
  maxSize: 25 * 1024 * 1024,
  maxRecipients: 100,
  maxClients: 500,
  maxPerAddress: 20,
  idleTimeoutMs: 120_000,
  dataTimeoutMs: 600_000,
  // The size up to which ingest keeps raw mail in its queue row: larger messages go to a file at once.
  memoryLimit: RAW_IN_ROW_BYTES,
  closeGraceMs: 8_000,
  // Postfix: smtpd_soft_error_limit 10, smtpd_error_sleep_time 1s, smtpd_hard_error_limit 20. The
  // hard limit is higher here, since a cut transaction is retried whole and would meet it again.
  softErrors: 10,
  errorDelayMs: 1_000,
  hardErrors: 100,
};

/**
 * MAIL parameters of the extensions we offer (SIZE, 8BITMIME, SMTPUTF8; REQUIRETLS, offered after
 * STARTTLS and refused by smtp-server before it). smtp-server checks their values and ignores any
 * others; like Postfix we refuse the others, and every RCPT parameter (DSN is not offered), with 555.
 */
const MAIL_PARAMETERS: ReadonlySet<string> = new Set(['SIZE', 'BODY', 'SMTPUTF8', 'REQUIRETLS']);
const NO_PARAMETERS: ReadonlySet<string> = new Set();
const BARE_POSTMASTER = /^postmaster$/i;

/**
 * Whether MAIL declared SMTPUTF8, without which addresses must be ASCII (RFC 6531 section 3.4).
 * Read from the accepted MAIL's own parameters: smtp-server's `envelope.smtpUtf8` is set before
 * onMailFrom runs and never cleared, so a refused MAIL with SMTPUTF8 would leave it on.
 */
function declaresSmtpUtf8(args: Record<string, unknown> | false | undefined): boolean {
  return !!args && Object.keys(args).some((name) => name.toUpperCase() === 'SMTPUTF8');
}

/** The first parameter of a MAIL or RCPT command that is not in `allowed`. */
function unsupportedParameter(args: Record<string, unknown> | false | undefined, allowed: ReadonlySet<string>): string | null {
  if (!args) return null;
  return Object.keys(args).find((name) => !allowed.has(name.toUpperCase())) ?? null;
}

/** What the listener is built from. */
export interface SmtpListenerDeps {
  config: Readonly<Config>;
  logger: Logger;
  clock: Clock;
  /** The certificate STARTTLS offers (section 15: the operator's files, ACME or self-signed). */
  tls: CertificateSource;
  checkRecipient: RecipientCheck;
  accept(delivery: RawDelivery): Promise<void>;
  overQuota(mailboxIds: number[], size: number): Promise<number[]>;
  /** Non-null while acknowledged mail waiting to be stored is past its limit in time (ingest backlogFull): new mail gets 451 4.3.1. */
  backlogFull?(): number | null;
  /** Spam policy before the 250 (DNSBL at RCPT, DMARC reject and rspamd at the end of DATA). */
  policy?: PreAcceptancePolicy;
  limits?: Partial<ListenerLimits>;
}

/**
 * The SMTP ingress listener (smtp-server): banner and EHLO name MAILSTEAD_HOSTNAME, SIZE,
 * 8BITMIME, SMTPUTF8, PIPELINING, STARTTLS with the certificate source's pair (always), no AUTH, RCPT
 * checks through `checkRecipient`, DATA streamed into a spool and handed to `accept`.
 */
export function createSmtpListener(deps: SmtpListenerDeps) {
  installDataScan();
  installExpnReply();
  installWireAsciiCheck();
  installLineLimit();
  const { config, logger, clock } = deps;
  const limits: ListenerLimits = { ...DEFAULT_LIMITS, ...deps.limits };
  const limitErrors = createErrorLimit(limits);
  const spoolDir = join(config.dataDir, 'tmp');
  mkdirSync(spoolDir, { recursive: true });
  const perAddress = createConnectionLimits(limits.maxPerAddress);
  // Where each accepted recipient of the current transaction goes; an envelope is replaced on RSET.
  const resolutions = new WeakMap<SMTPServerEnvelope, Map<string, Deliverable>>();
  let inFlight = 0;
  let drained: (() => void) | null = null;
  let closing: Promise<void> | null = null;

  const server = new SMTPServer({
    name: config.hostname,
    banner: 'Mailstead',
    heloResponse: '%s Hello %s',
    size: limits.maxSize,
    authOptional: true,
    disabledCommands: ['AUTH'],
    // RFC 8689: offered once the session is under TLS. This server is the final hop, so a message
    // that asks for TLS all the way has had it.
    hideREQUIRETLS: false,
    // key/cert for handshakes without SNI, and an SNICallback that hands out the pair in force.
    ...deps.tls.serverOptions(),
    maxClients: limits.maxClients,
    socketTimeout: limits.idleTimeoutMs,
    closeTimeout: limits.closeGraceMs + 1_000,
    resolver: createReverseResolver(config.dnsServers),
    logger: false,

    onConnect(session, callback) {
      if (!perAddress.admit(session.id, session.remoteAddress)) {
        logger.debug({ ip: session.remoteAddress }, 'smtp connection over the per-address limit');
        return callback(TOO_MANY_CONNECTIONS());
      }
      deps.policy?.connected(session.remoteAddress);
      callback();
    },

    onClose(session) {
      perAddress.release(session.id, session.remoteAddress);
    },

    onMailFrom(address, session, callback) {
      const refuse = (reply: SmtpReply) => void limitErrors(session, reply).then(callback);
      const unsupported = unsupportedParameter(address.args, MAIL_PARAMETERS);
      if (unsupported) return refuse(UNSUPPORTED_PARAMETER(unsupported));
      if (sentNonAscii(address) && !declaresSmtpUtf8(address.args)) return refuse(NEEDS_SMTPUTF8());
      // Storage is far behind: the sender keeps the message and retries, rather than it waiting here unseen.
      if ((deps.backlogFull?.() ?? null) !== null) return refuse(BACKLOG_FULL());
      callback();
    },

    onRcptTo(address, session, callback) {
      const refuse = (reply: SmtpReply) => void limitErrors(session, reply).then(callback);
      const unsupported = unsupportedParameter(address.args, NO_PARAMETERS);
      if (unsupported) return refuse(UNSUPPORTED_PARAMETER(unsupported));
      if (sentNonAscii(address) && !(session.envelope.mailFrom && declaresSmtpUtf8(session.envelope.mailFrom.args))) {
        return refuse(NEEDS_SMTPUTF8());
      }
      // RFC 5321 section 4.5.1: `<Postmaster>` without a domain must be taken. It names this
      // server's postmaster, so the envelope and the check get postmaster@MAILSTEAD_HOSTNAME.
      if (BARE_POSTMASTER.test(address.address)) address.address = `postmaster@${config.hostname}`;
      const envelope = session.envelope;
      const map = resolutions.get(envelope) ?? new Map<string, Deliverable>();
      const key = address.address.toLowerCase();
      const soFar = map.has(key) ? map.size - 1 : map.size;
      const args = envelope.mailFrom ? envelope.mailFrom.args : false;
      const declared = args && typeof args.SIZE === 'string' ? Number(args.SIZE) : 0;
      deps.checkRecipient(address.address, soFar, declared).then(
        async (resolution) => {
          const refusal = deps.policy ? await deps.policy.recipient({ remoteAddress: session.remoteAddress, address: address.address }) : null;
          if (refusal) return refuse(refusal);
          map.set(key, resolution);
          resolutions.set(envelope, map);
          callback();
        },
        (err: SmtpReply) => refuse(err),
      );
    },

    onData(stream, session, callback) {
      inFlight++;
      const timer = setTimeout(() => cut(session, '4.4.2 timeout receiving the message'), limits.dataTimeoutMs);
      receiveMessage({
        hostname: config.hostname,
        clock,
        logger,
        spoolDir,
        memoryLimit: limits.memoryLimit,
        maxSize: limits.maxSize,
        resolutionOf: (s, address) => resolutions.get(s.envelope)?.get(address.toLowerCase()),
        accept: deps.accept,
        overQuota: deps.overQuota,
        backlogFull: deps.backlogFull,
        policy: deps.policy,
      }, stream, session, (err, message) => {
        clearTimeout(timer);
        inFlight--;
        if (inFlight === 0 && drained) drained();
        callback(err, message);
      });
    },
  });
  server.on('error', (err) => logger.warn({ err }, 'smtp error'));
  // smtp-server keeps its own default context for handshakes without SNI: rebuild it on every swap.
  const unsubscribeTls = deps.tls.onSwap(({ key, cert }) => server.updateSecureContext({ key, cert }));
  server.server.on('connection', coalesceReplies);

  /** Sends 421 to the session's connection, which closes it (and aborts its DATA stream). */
  function cut(session: SMTPServerSession, text: string) {
    for (const connection of server.connections) {
      if (connection.session === session) connection.send(421, text);
    }
  }

  function waitForInFlight(ms: number): Promise<void> {
    if (inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      drained = () => { clearTimeout(timer); resolve(); };
    });
  }

  return {
    /** Listens and resolves with the real port (MAILSTEAD_SMTP_PORT may be 0). */
    listen: () => listenSmtp(server, config.smtpPort, config.smtpHost),

    /**
     * Stops accepting connections; sessions get 421 on their next command. Messages already in
     * DATA are received and committed (up to closeGraceMs), then remaining sessions are closed.
     */
    close(): Promise<void> {
      closing ??= (async () => {
        unsubscribeTls();
        await drainSmtp(server, () => waitForInFlight(limits.closeGraceMs));
      })();
      return closing;
    },

    /** Open sessions and messages in DATA now (metrics, tests). */
    stats: () => ({ connections: server.connections.size, inFlight }),
  };
}
/** The running SMTP listener. */
export type SmtpListener = ReturnType<typeof createSmtpListener>;
