import { smtpReply } from '../smtp-replies.js';

// The replies of submission (DECISIONS.md section 13), in one place so tests and docs can name them.
/** AUTH before STARTTLS on the STARTTLS port. */
export const TLS_FIRST = () => smtpReply(530, '5.7.0 must issue a STARTTLS command first');
/** MAIL, RCPT or DATA before a successful AUTH (smtp-server sends it; the text is its option). */
export const AUTH_REQUIRED_TEXT = '5.7.0 authentication required';
/** Wrong address or password, a mailbox that is gone, or an authorization identity of someone else. */
export const AUTH_FAILED = () => smtpReply(535, '5.7.8 authentication credentials invalid');
/** An IP locked out after ten failed logins: refused even with the right password. */
export const LOCKED_OUT = () => smtpReply(421, '4.7.0 too many failed logins from your address, try again later');
/** MAIL FROM or From: that the login may not send as, or the null sender. */
export const NOT_YOUR_ADDRESS = (what: string) => smtpReply(553, `5.7.1 ${what}`);
/** RCPT past the per-message recipient limit. */
export const TOO_MANY_RECIPIENTS = () => smtpReply(452, '4.5.3 too many recipients');
/** RCPT past the mailbox's recipients of the last 24 hours. */
export const DAILY_LIMIT = () => smtpReply(450, '4.7.1 daily sending limit reached, try again later');
/** RCPT to a hosted domain without that mailbox, alias or a catch-all. */
export const UNKNOWN_USER = () => smtpReply(550, '5.1.1 mailbox unavailable: no such user here');
/** RCPT of something that is not a plain local@domain address (outbound delivery could not route it). */
export const BAD_RECIPIENT = (problem: string) => smtpReply(553, `5.1.3 recipient ${problem}`);
/** A message the sender's own mailbox has no room to keep in Sent. */
export const SENDER_FULL = () => smtpReply(552, '5.2.2 your mailbox is full: no room for the Sent copy');
/** DATA past the advertised SIZE. */
export const TOO_BIG = (limit: number) => smtpReply(552, `5.3.4 message exceeds fixed maximum message size of ${limit} bytes`);
/** A temporary failure while looking up or storing: the client retries. */
export const LOCAL_ERROR = () => smtpReply(451, '4.3.0 temporary local problem, try again later');
/** A connection over the per-address concurrency limit. */
export const TOO_MANY_CONNECTIONS = () => smtpReply(421, '4.7.0 too many connections from your address, try again later');
