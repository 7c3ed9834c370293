import type { SMTPServerSession } from 'smtp-server';
import { smtpReply, type SmtpReply } from '../smtp-replies.js';

/** How a session that keeps being refused is slowed and then cut (Postfix's soft and hard error limits). */
export interface ErrorLimits {
  /** Refused MAIL and RCPT commands a session gets answered at once. */
  softErrors: number;
  /** The wait before each refusal past the soft limit. */
  errorDelayMs: number;
  /** The refusal that ends the session with 421 instead. */
  hardErrors: number;
}

/** A session refused this often is cut. */
export const TOO_MANY_ERRORS = () => smtpReply(421, '4.7.0 too many errors, closing the connection');

/**
 * Counts the permanent refusals (5xx) of MAIL and RCPT per session. Past `softErrors` each one is
 * answered after `errorDelayMs`, and the `hardErrors`-th ends the session: guessing addresses
 * (550 5.1.1 tells which exist) costs a second a guess instead of a millisecond, while a list
 * server with a few stale addresses among its recipients is only slowed. Temporary refusals (452
 * too many recipients or mailbox full, 451) are not the client's fault and do not count.
 */
export function createErrorLimit(limits: ErrorLimits) {
  const refusals = new WeakMap<SMTPServerSession, number>();
  return async (session: SMTPServerSession, reply: SmtpReply): Promise<SmtpReply> => {
    if (reply.responseCode < 500) return reply;
    const count = (refusals.get(session) ?? 0) + 1;
    refusals.set(session, count);
    if (count >= limits.hardErrors) return TOO_MANY_ERRORS();
    if (count > limits.softErrors) await new Promise((resolve) => setTimeout(resolve, limits.errorDelayMs).unref());
    return reply;
  };
}
