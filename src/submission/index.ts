import type { Core } from '../core.js';
import type { Emails } from '../emails/index.js';
import type { FolderMessages } from '../emails/folders/index.js';
import type { RecipientResolver } from '../inbound/types.js';
import { createLockout } from '../mailboxes/lockout.js';
import { createMailboxLogins } from '../mailboxes/logins.js';
import type { Outbound } from '../outbound/index.js';
import type { CertificateSource } from '../tls/index.js';
import { createSendService } from './api.js';
import { createDailyLedger } from './daily.js';
import { createPostgresDailyLedger } from './pg-daily.js';
import { createSubmissionPath } from './deliver.js';
import { submissionRoutes } from './routes.js';
import { createSubmissionListener, SUBMISSION_LIMITS, type SubmissionLimits, type SubmissionListener } from './server.js';
import { createSubmissionHandlers } from './session.js';
import { listenUnlessPrivileged } from '../listen.js';

/** The ports submission listens on; null for one that is disabled. */
export interface SubmissionPorts {
  submissionPort: number | null;
  submissionsPort: number | null;
}

/**
 * Submission and send-as (DECISIONS.md section 13): the listeners on MAILSTEAD_SUBMISSION_PORT
 * (STARTTLS) and MAILSTEAD_SUBMISSIONS_PORT (implicit TLS), and POST /v1/mail/send, both ending in
 * the one submission path (Sent copy, DKIM, outbound queue, ingest for hosted recipients).
 */
export function installSubmission(core: Core, deps: {
  resolve: RecipientResolver; emails: Emails; folders: FolderMessages; outbound: Outbound; tls: CertificateSource; limits?: Partial<SubmissionLimits>;
}) {
  const { db, clock, config, logger } = core;
  const logins = createMailboxLogins({ db });
  // The lock-out lives in the database, so this instance and IMAP's count the same failures.
  const lockout = createLockout({ db, clock });
  const limit = () => config.submissionDailyLimit;
  // Any node may send for a mailbox on PostgreSQL: the count is the database's there.
  const ledger = core.backend.choose({ sqlite: () => createDailyLedger({ db, clock, limit }), postgres: () => createPostgresDailyLedger({ db, clock, limit, logger: core.logger }) })();
  const submit = createSubmissionPath(core, {
    ingest: deps.emails.ingest, outbound: deps.outbound.store, ledger, wakeOutbound: () => deps.outbound.worker.wake(),
  });
  const send = createSendService(core, { resolve: deps.resolve, submit, ledger });
  submissionRoutes({ registry: core.registry, send });

  const handlers = createSubmissionHandlers(core, { logins, lockout, resolve: deps.resolve, submit, ledger });
  const limits = { ...SUBMISSION_LIMITS, ...deps.limits };
  const listener = (port: number | null, implicitTls: boolean): SubmissionListener | null => port === null ? null : createSubmissionListener({
    host: config.smtpHost, port, implicitTls, hostname: config.hostname, tls: deps.tls, logger, limits, handlers,
  });
  const starttls = listener(config.submissionPort, false);
  const implicit = listener(config.submissionsPort, true);

  return {
    send,
    /** Listens on the enabled ports; resolves with the real ones. */
    async listen(): Promise<SubmissionPorts> {
      const submissionPort = starttls && config.submissionPort !== null
        ? await listenUnlessPrivileged('submission', 'MAILSTEAD_SUBMISSION_PORT', config.submissionPort, logger, () => starttls.listen()) : null;
      const submissionsPort = implicit && config.submissionsPort !== null
        ? await listenUnlessPrivileged('submission (implicit TLS)', 'MAILSTEAD_SUBMISSIONS_PORT', config.submissionsPort, logger, () => implicit.listen()) : null;
      return { submissionPort, submissionsPort };
    },
    /** Stops both listeners. */
    async close(): Promise<void> {
      await Promise.all([starttls?.close(), implicit?.close()]);
    },
  };
}
export type Submission = ReturnType<typeof installSubmission>;
