import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';

type Parse = (this: SMTPConnection, name: string, command: Buffer | string) => unknown;

const NON_ASCII = /[^\x00-\x7f]/;
/** Parsed MAIL and RCPT commands whose line, as the client sent it, had a non-ASCII character. */
const nonAsciiOnWire = new WeakSet<object>();

/**
 * Records which MAIL and RCPT commands carried non-ASCII text on the wire. smtp-server hands the
 * hooks an address whose domain it has already turned from punycode into Unicode, so an ASCII
 * `box@xn--bcher-kva.test` would look like a UTF-8 address that needs SMTPUTF8 (RFC 6531 section
 * 3.4 asks only that what is sent be ASCII). server.ts calls this once.
 */
export function installWireAsciiCheck(): void {
  const proto = SMTPConnection.prototype as unknown as { _parseAddressCommand: Parse & { wrapped?: true } };
  if (proto._parseAddressCommand.wrapped) return;
  const parse = proto._parseAddressCommand;
  const wrapped: Parse & { wrapped?: true } = function (this: SMTPConnection, name, command) {
    const parsed = parse.call(this, name, command);
    if (parsed && typeof parsed === 'object' && NON_ASCII.test(String(command ?? ''))) nonAsciiOnWire.add(parsed);
    return parsed;
  };
  wrapped.wrapped = true;
  proto._parseAddressCommand = wrapped;
}

/** Whether the MAIL or RCPT command that gave this address had non-ASCII text as sent. */
export const sentNonAscii = (address: object): boolean => nonAsciiOnWire.has(address);
