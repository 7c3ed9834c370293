import type { SMTPServer } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { TLS_FIRST } from './replies.js';

type Handler = (this: Connection, command: Buffer, callback: () => void) => void;
type Connection = SMTPConnection & {
  _server: SMTPServer;
  secure: boolean;
  send(code: number, data?: string | string[] | null, context?: unknown): void;
};

/** The listeners that speak submission; port 25's listener shares the prototype and is left as it is. */
const submissionServers = new WeakSet<SMTPServer>();
let installed = false;

/**
 * Two things smtp-server does not do the way RFC 4954 and DECISIONS.md section 13 ask on the
 * STARTTLS submission port: it lists AUTH in EHLO before TLS (a client must not even be tempted to
 * send a password in clear), and it answers AUTH before STARTTLS with a non-standard 538. Here,
 * for submission listeners only, EHLO without TLS leaves AUTH out and AUTH gets `530 5.7.0`.
 */
export function markSubmissionServer(server: SMTPServer): void {
  submissionServers.add(server);
  if (installed) return;
  installed = true;
  const proto = SMTPConnection.prototype as unknown as { handler_AUTH: Handler; handler_EHLO: Handler; send: Connection['send'] };
  const auth = proto.handler_AUTH;
  const ehlo = proto.handler_EHLO;

  proto.handler_AUTH = function (this: Connection, command, callback) {
    if (!submissionServers.has(this._server) || this.secure) return auth.call(this, command, callback);
    const reply = TLS_FIRST();
    this.send(reply.responseCode, reply.message);
    callback();
  };

  proto.handler_EHLO = function (this: Connection, command, callback) {
    if (!submissionServers.has(this._server) || this.secure) return ehlo.call(this, command, callback);
    // The EHLO handler answers synchronously: its one multi-line reply passes this filter.
    const send = proto.send;
    const filtered: Connection['send'] = function (this: Connection, code, data, context) {
      const lines = Array.isArray(data) ? data.filter((line) => !/^AUTH\b/i.test(line)) : data;
      return send.call(this, code, lines ?? undefined, context);
    };
    Object.defineProperty(this, 'send', { value: filtered, configurable: true, writable: true });
    try {
      ehlo.call(this, command, callback);
    } finally {
      delete (this as { send?: unknown }).send;
    }
  };
}
