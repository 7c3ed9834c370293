import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';

type Handler = (this: SMTPConnection, command: Buffer, callback: () => void) => void;

/**
 * EXPN is answered `502 5.5.1` (RFC 5321 sections 3.5.2 and 7.3: a server may refuse to expand
 * lists, and 502 says the command exists but is not offered here). smtp-server has no EXPN, so it
 * would answer `500 command not recognized`, which a client reads as a syntax error and which
 * counts toward its limit of ten unrecognized commands.
 */
const expn: Handler = function (this: SMTPConnection, _command, callback) {
  this.send(502, '5.5.1 EXPN is not available here');
  callback();
};

/** Gives smtp-server's connections the EXPN reply above (server.ts calls this once). */
export function installExpnReply(): void {
  (SMTPConnection.prototype as unknown as { handler_EXPN: Handler }).handler_EXPN = expn;
}
