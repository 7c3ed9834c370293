/** An error whose SMTP reply is `code text`; smtp-server sends it as is. */
export type SmtpReply = Error & { responseCode: number };

/** Builds the reply an smtp-server handler passes to its callback; `text` starts with the enhanced status code. */
export function smtpReply(code: number, text: string): SmtpReply {
  const err = new Error(text) as SmtpReply;
  err.responseCode = code;
  return err;
}

// The replies of the ingress, in one place so tests and docs can name them.
/** RCPT to a domain we do not host, or an address that tries to route elsewhere: never an open relay. */
export const RELAY_DENIED = () => smtpReply(550, '5.7.1 relaying denied');
/** RCPT to a hosted domain without that mailbox, alias or a catch-all. */
export const UNKNOWN_USER = () => smtpReply(550, '5.1.1 mailbox unavailable: no such user here');
/** RCPT past the per-message recipient limit. */
export const TOO_MANY_RECIPIENTS = () => smtpReply(452, '4.5.3 too many recipients');
/** RCPT to a mailbox whose quota is used up. */
export const OVER_QUOTA = () => smtpReply(452, '4.2.2 mailbox full');
/** After DATA: the message does not fit in any recipient's mailbox. */
export const MAILBOX_FULL = () => smtpReply(552, '5.2.2 mailbox full');
/** A temporary failure while looking a recipient up or storing the message: the sender retries. */
export const LOCAL_ERROR = () => smtpReply(451, '4.3.0 temporary local problem, try again later');
/** Mail acknowledged and not yet stored is past its limit in time (ingest backlogFull): the sender retries later. */
export const BACKLOG_FULL = () => smtpReply(451, '4.3.1 too much mail waiting to be stored, try again later');
/** DATA past the advertised SIZE. */
export const TOO_BIG = (limit: number) => smtpReply(552, `5.3.4 message exceeds fixed maximum message size of ${limit} bytes`);
/** A connection over the per-address concurrency limit. */
export const TOO_MANY_CONNECTIONS = () => smtpReply(421, '4.7.0 too many connections from your address, try again later');
/** A non-ASCII MAIL or RCPT address in a transaction whose MAIL did not declare SMTPUTF8 (RFC 6531 section 3.6). */
export const NEEDS_SMTPUTF8 = () => smtpReply(553, '5.6.7 non-ASCII addresses need the SMTPUTF8 parameter of MAIL');
/** A MAIL or RCPT parameter of an extension we do not offer (RFC 5321 section 4.1.1.11). */
export const UNSUPPORTED_PARAMETER = (name: string) => smtpReply(555, `5.5.4 unsupported parameter ${name}`);
/** RCPT from a client address that a DNSBL zone lists (DECISIONS.md section 18). */
export const DNSBL_LISTED = (zone: string) => smtpReply(554, `5.7.1 client address listed by ${zone}`);
/** End of DATA: the From domain publishes DMARC p=reject (or sp=reject) and the message fails DMARC. */
export const DMARC_REJECT = (domain: string) => smtpReply(550, `5.7.1 message refused by the DMARC policy of ${domain}`);
/** End of DATA: rspamd's action was reject. */
export const RSPAMD_REJECT = () => smtpReply(550, '5.7.1 message refused as spam');
/** End of DATA: rspamd's action was soft reject or greylist: the sender tries again later. */
export const RSPAMD_DEFER = () => smtpReply(451, '4.7.1 message deferred by the spam filter, try again later');
