import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';

type OnCommand = (this: SMTPConnection, command: Buffer, callback?: () => void) => unknown;
type Internals = { _nextHandler?: unknown; _upgrading?: boolean; _whenWritable?: (next: () => void) => void };

/** RFC 5321 section 4.5.3.1.4: a command line is at most 512 octets, CRLF included. */
export const COMMAND_LINE_OCTETS = 512;

/**
 * What the MAIL parameters offered here add to its line (each RFC raises the limit for its
 * parameter): SIZE 26 (RFC 1870), BODY=8BITMIME 14 (RFC 6152), SMTPUTF8 10 (RFC 6531), REQUIRETLS
 * 11 (RFC 8689). DSN is not offered, so RCPT keeps 512. AUTH lines and SASL responses are exempt
 * (RFC 4954 allows 12,288 octets; smtp-server ends the session past its own 16 KB bound).
 */
const LIMITS: Record<string, number> = {
  MAIL: COMMAND_LINE_OCTETS + 26 + 14 + 10 + 11,
};

/**
 * Answers a command line over its limit `500 5.5.2 line too long` without running it (smtp-server
 * would run it or, for most, answer "command not recognized", which says nothing of the cause).
 * Installed on smtp-server's connection class once, for the ingress and submission listeners alike.
 */
export function installLineLimit(): void {
  const proto = SMTPConnection.prototype as unknown as { _onCommand: OnCommand & { lineLimited?: true } };
  if (proto._onCommand.lineLimited) return;
  const onCommand = proto._onCommand;
  const limited: OnCommand & { lineLimited?: true } = function (this: SMTPConnection, command, callback) {
    const self = this as unknown as Internals;
    const name = command.subarray(0, 5).toString('latin1').split(' ')[0].toUpperCase();
    // + 2: the CRLF the parser took off.
    const tooLong = !self._nextHandler && !self._upgrading && name !== 'AUTH' && command.length + 2 > (LIMITS[name] ?? COMMAND_LINE_OCTETS);
    if (!tooLong) return onCommand.call(this, command, callback);
    this.send(500, '5.5.2 line too long');
    const next = callback ?? (() => undefined);
    setImmediate(() => (self._whenWritable ? self._whenWritable.call(this, next) : next()));
    return undefined;
  };
  limited.lineLimited = true;
  proto._onCommand = limited;
}
