import type { SMTPServerEnvelope, SMTPServerSession } from 'smtp-server';
import { withoutReturnPath } from '../smtp/return-path.js';
import type { Core } from '../core.js';
import { addressProblem } from '../message/address.js';
import type { RecipientResolver } from '../inbound/types.js';
import type { Lockout } from '../mailboxes/lockout.js';
import type { MailboxLogin, MailboxLogins } from '../mailboxes/logins.js';
import type { DailyLedger } from './daily.js';
import { DailyLimitError, SenderFullError, type SubmissionRecipient, type SubmitMessage } from './deliver.js';
import { completeHeaders, fromHeaderAddress } from './headers.js';
import {
  AUTH_FAILED, BAD_RECIPIENT, DAILY_LIMIT, LOCKED_OUT, NOT_YOUR_ADDRESS, SENDER_FULL, TOO_MANY_RECIPIENTS, UNKNOWN_USER,
} from './replies.js';
import type { SubmissionHandlers } from './server.js';
import { submissionStore, type SenderMailbox } from '../mailstore/submission-store.js';

/** Recipients of one message at most (DECISIONS.md section 13). */
export const MAX_RECIPIENTS = 100;

const senderOf = (login: MailboxLogin): SenderMailbox => ({ id: login.mailboxId, tenantId: login.tenantId, address: login.address });

/**
 * What a submission session may do (DECISIONS.md section 13): log in with a mailbox's address and
 * password under the lock-out shared with IMAP; send as its own address or an alias that allows
 * it, checked at MAIL (envelope) and after DATA (From:); at most 100 recipients and the daily
 * limit; then the message takes the one submission path.
 */
export function createSubmissionHandlers(core: Core, deps: {
  logins: MailboxLogins; lockout: Lockout; resolve: RecipientResolver; submit: SubmitMessage; ledger: DailyLedger;
}): SubmissionHandlers {
  const { db, clock, config, logger } = core;
  // Per transaction (a new envelope on RSET/EHLO): the addresses the login may send as, and where each recipient goes.
  const senders = new WeakMap<SMTPServerEnvelope, Set<string>>();
  const routes = new WeakMap<SMTPServerEnvelope, Map<string, SubmissionRecipient>>();
  const loginOf = (session: SMTPServerSession) => session.user as unknown as MailboxLogin;

  /**
   * What a mailbox may send as, remembered per mailbox while the directory cannot have changed:
   * kept with the connection's change count (core.changes, as the recipient resolver's cache) and
   * reused only while it is the same, so an alias edit applies to the next MAIL FROM. A session
   * sending back to back otherwise ran this query for every message.
   */
  const allowedCache = new Map<number, { at: number; value: Set<string> }>();
  async function senderAddresses(login: MailboxLogin): Promise<Set<string>> {
    const at = core.changes();
    const hit = allowedCache.get(login.mailboxId);
    if (hit && hit.at === at) return hit.value;
    const value = await submissionStore.senderAddresses(db, senderOf(login));
    if (core.changes() === at) {
      if (allowedCache.size >= 10_000) allowedCache.clear();
      allowedCache.set(login.mailboxId, { at, value });
    }
    return value;
  }

  return {
    async auth(auth, session) {
      // Its place is held before the password is checked: a failure if wrong, forgotten on success (mailboxes/lockout.ts says why).
      const attempt = await deps.lockout.begin(session.remoteAddress);
      if (!attempt) return LOCKED_OUT();
      // RFC 4616: an authorization identity other than the authentication identity is someone else's mailbox.
      const a = auth as typeof auth & { authzid?: string; authcid?: string };
      const foreignAuthz = auth.method === 'PLAIN' && !!a.authzid && !!a.authcid && a.authzid.toLowerCase() !== a.authcid.toLowerCase();
      let login;
      try {
        login = foreignAuthz ? null : await deps.logins.verify(auth.username ?? '', auth.password ?? '');
      } catch (err) {
        await attempt.forget(); // our fault, not a failed login
        throw err;
      }
      if (!login) {
        await attempt.fail();
        return AUTH_FAILED();
      }
      await attempt.forget();
      logger.debug({ mailbox_id: login.mailboxId }, 'submission login');
      return { user: login };
    },

    async mailFrom(address, session) {
      if (address === '') return NOT_YOUR_ADDRESS('the null sender is not accepted for submission');
      const allowed = await senderAddresses(loginOf(session));
      if (!allowed.has(address.toLowerCase())) return NOT_YOUR_ADDRESS(`you may not send as <${address}>`);
      senders.set(session.envelope, allowed);
      return null;
    },

    async rcptTo(address, session) {
      const envelope = session.envelope;
      const map = routes.get(envelope) ?? new Map<string, SubmissionRecipient>();
      const key = address.toLowerCase();
      if (map.has(key)) return null;
      const problem = addressProblem(key);
      if (problem) return BAD_RECIPIENT(problem);
      if (map.size >= MAX_RECIPIENTS) return TOO_MANY_RECIPIENTS();
      // Counted in memory (daily.ts); DATA reserves the message's count again, against sessions sending meanwhile.
      const used = await deps.ledger.used(loginOf(session).mailboxId);
      if (used + map.size >= config.submissionDailyLimit) return DAILY_LIMIT();
      const resolution = await deps.resolve(key);
      if (resolution.kind === 'unknown') return UNKNOWN_USER();
      map.set(key, { address: key, resolution });
      routes.set(envelope, map);
      return null;
    },

    async data(raw, session) {
      const envelope = session.envelope;
      const allowed = senders.get(envelope);
      const recipients = [...(routes.get(envelope)?.values() ?? [])];
      if (!allowed || !envelope.mailFrom || recipients.length === 0) return NOT_YOUR_ADDRESS('no sender or recipients accepted');
      const from = await fromHeaderAddress(raw);
      if ('problem' in from) return NOT_YOUR_ADDRESS(from.problem);
      if (!allowed.has(from.address)) return NOT_YOUR_ADDRESS(`you may not send as <${from.address}> in From:`);
      const login = loginOf(session);
      const fromDomain = from.address.slice(from.address.lastIndexOf('@') + 1);
      // A Return-Path the client wrote goes: only a final delivery adds one (DECISIONS.md section 21).
      const message = completeHeaders(withoutReturnPath(raw), fromDomain, clock.now());
      try {
        await deps.submit({
          tenantId: login.tenantId, sender: senderOf(login), mailFrom: envelope.mailFrom.address, fromDomain, recipients, raw: message.raw,
          trace: { remoteAddress: session.remoteAddress, heloName: session.hostNameAppearsAs || 'unknown', protocol: session.secure ? 'ESMTPSA' : 'ESMTPA', tls: session.secure },
        });
      } catch (err) {
        if (err instanceof SenderFullError) return SENDER_FULL();
        if (err instanceof DailyLimitError) return DAILY_LIMIT();
        throw err;
      }
      // Debug, as port 25's acceptances: at info, the line per message cost ~0.3 ms of the SMTP thread (docs/PERFORMANCE.md).
      logger.debug({ mailbox_id: login.mailboxId, recipients: recipients.length }, 'submission accepted');
      return `2.0.0 Ok: queued as ${message.messageId}`;
    },
  };
}
