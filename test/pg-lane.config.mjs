// The PostgreSQL lane of `npm test` (issue 36, DECISIONS.md section 17): ava runs these files again
// with MAILSTEAD_TEST_DATABASE=postgres, so every server they start is on a throw-away PostgreSQL
// cluster (test/helpers/pg.ts) instead of SQLite. Only files that pass whole on PostgreSQL are
// listed; the list grows as stores are ported, until it is every file and this list goes.
// Test files with no server or database (pure units) are left out: they would only repeat.
import { readFileSync } from 'node:fs';

const { ava } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

export default {
  ...ava,
  files: [
    // PostgreSQL only (left out of the SQLite lane in package.json): they open databases of their own.
    'test/emails/postgres-reads.test.ts',
    'test/emails/pg-read-pool.test.ts', // PostgreSQL reader threads answer as the main thread
    'test/ingest/pg-markers.test.ts',
    'test/ingest/two-nodes.test.ts',
    'test/db/backend.test.ts', // the Backend decided at open and its dml() fragments
    'test/db/postgres.test.ts', // the seam itself: migrations, SKIP LOCKED claims, advisory locks
    // Two server processes on one database (test/helpers/nodes.ts); PostgreSQL only, so the SQLite lane leaves them out.
    'test/db/two-nodes-cron.test.ts',
    'test/db/two-nodes-lockout.test.ts',
    'test/db/two-nodes-outbound.test.ts',
    'test/db/two-nodes-tasks.test.ts',
    'test/db/two-nodes-webhooks.test.ts',
    'test/db/two-nodes-changes.test.ts', // committed mail changes relayed between nodes (LISTEN/NOTIFY)
    'test/db/two-nodes-mail.test.ts', // SMTP on either node listed once; IDLE on one hears of mail on the other
    'test/db/two-nodes-daily.test.ts', // the submission daily limit is counted in the database, whichever node sends
    'test/db/two-nodes-secret.test.ts', // the install secret is the database's: links and SRS addresses verify on every node
    'test/db/two-nodes-directory.test.ts', // the recipient cache sees directory changes made on any node
    'test/db/two-nodes-keys.test.ts', // kept API key rows see revocations and plan changes made anywhere
    'test/db/two-nodes-vacation.test.ts', // vacation replies remembered in the database: once per sender whichever node stores the mail
    'test/ingest/backlog-limit.test.ts', // 451 4.3.1 / 503 past the backlog's limit in seconds (issue 47)
    'test/mailstore/pipeline.test.ts', // delivery steps place copies (folder, keywords, prepend), redirect and reply in the batch
    'test/db/query-plans.test.ts', // hot-path queries look rows up by index on a large store (issue 47)
    'test/aliases/create.test.ts',
    'test/autoconfig/thunderbird.test.ts',
    'test/autoconfig/outlook-apple.test.ts',
    'test/aliases/delete.test.ts',
    'test/aliases/edit.test.ts',
    'test/aliases/resolve.test.ts',
    'test/dns/check.test.ts',
    'test/dns/client-records.test.ts',
    'test/dns/inconclusive.test.ts',
    'test/dns/isolation.test.ts',
    'test/dns/route.test.ts',
    'test/dns/schedule.test.ts',
    'test/domains/create.test.ts',
    'test/domains/domains.test.ts',
    'test/domains/validation.test.ts',
    'test/http/auth.test.ts',
    'test/http/errors.test.ts',
    'test/http/linger.test.ts',
    'test/http/openapi.test.ts',
    'test/legacy/aliases.test.ts',
    'test/legacy/domains.test.ts',
    'test/legacy/routing.test.ts',
    'test/mailboxes/bulk.test.ts',
    'test/mailboxes/delete.test.ts',
    'test/mailboxes/list.test.ts',
    'test/mailboxes/lockout.test.ts',
    'test/mailboxes/logins.test.ts',
    'test/mailboxes/redaction.test.ts',
    'test/mailboxes/single.test.ts',
    'test/tasks/queue.test.ts',
    'test/tasks/poison.test.ts',
    'test/webhooks/crud.test.ts',
    'test/webhooks/poison.test.ts',
    'test/emails/list.test.ts',
    'test/emails/search.test.ts',
    'test/emails/state.test.ts',
    'test/emails/attachments.test.ts',
    'test/emails/folders.test.ts',
    'test/emails/folder-snapshots.test.ts', // a folder's list kept between SELECTs shows what is stored (issue 47)
    'test/emails/isolation.test.ts',
    'test/emails/prefix.test.ts',
    'test/ingest/inbound.test.ts',
    'test/ingest/smtp.test.ts',
    'test/ingest/routing.test.ts',
    'test/ingest/backlog-metrics.test.ts',
    'test/ingest/stop-parsing.test.ts',
    'test/ingest/storage-failure.test.ts',
    'test/ingest/poison.test.ts', // NUL, invalid UTF-8 and a 2,000-part tree over SMTP: stored, and nothing waits behind them
    'test/ingest/set-aside.test.ts', // a message that always fails to store is set aside; the gauge, the API, the CLI
    'test/smtp/authentication.test.ts',
    'test/smtp/corpus-delivery.test.ts',
    'test/smtp/crash.test.ts',
    'test/smtp/delivery.test.ts',
    'test/spam/filing.test.ts',
    'test/spam/exclusions.test.ts', // no verdict for send-API hosted copies, Sent copies and our DSNs
    'test/spam/lists.test.ts',
    'test/spam/reputation.test.ts',
    'test/spam/fuzz.test.ts', // hostile mail through the tokeniser and a trained model (issue 41)
    'test/spam/batch.test.ts', // the classify step given a whole batch of several tenants' mail
    'test/spam/token-cache.test.ts', // token counts kept between batches, checked by the model's version
    'test/spam/model-store.test.ts', // a deleted mailbox's own model is forgotten, its tenant's kept
    'test/smtp/large-attachment.test.ts',
    'test/smtp/protocol.test.ts',
    'test/smtp/shutdown.test.ts',
    'test/smtp/starttls.test.ts',
    'test/smtp/timeouts.test.ts',
    'test/ingest/crash.test.ts',
    'test/ingest/sweep.test.ts',
    'test/imap/append.test.ts',
    'test/imap/copy.test.ts',
    'test/imap/auth.test.ts',
    'test/imap/autologout.test.ts',
    'test/imap/condstore.test.ts',
    'test/imap/faces.test.ts',
    'test/imap/fetch.test.ts',
    'test/imap/fetch-stored.test.ts',
    'test/imap/fetch-sections.test.ts',
    'test/imap/fuzz.test.ts',
    'test/imap/fuzz-literals.test.ts', // literal sizes in every string argument (issue 41)
    'test/imap/fuzz-nesting.test.ts',
    'test/imap/fuzz-arguments.test.ts',
    'test/imap/fuzz-sequences.test.ts',
    'test/imap/fuzz-idle.test.ts',
    'test/imap/hostile.test.ts',
    'test/imap/imaplib.test.ts',
    'test/imap/limits.test.ts',
    'test/imap/listeners.test.ts',
    'test/imap/mailboxes.test.ts',
    'test/imap/mbsync.test.ts',
    'test/imap/search.test.ts',
    'test/imap/search-expunge.test.ts',
    'test/imap/session.test.ts',
    'test/imap/store.test.ts',
    'test/import/imap.test.ts', // IMAP import from a real Dovecot
    'test/import/restart.test.ts', // SIGKILL mid-import, restart: exact count
    'test/import/uploads.test.ts', // mbox and Maildir tar uploads, exports
    'test/import/fuzz-uploads.test.ts', // hostile mbox and tar uploads
    'test/import/cli.test.ts', // mailstead import / export
    'test/imap/sequence.test.ts',
    'test/imap/select.test.ts',
    'test/imap/binary.test.ts',
    'test/imap/move.test.ts',
    'test/imap/envelope.test.ts',
    'test/imap/list.test.ts',
    'test/imap/sort.test.ts',
    'test/imap/multiappend.test.ts',
    'test/imap/thread.test.ts',
    'test/imap/context-search.test.ts',
    'test/imap/imaptest.test.ts', // Dovecot's imaptest scripted tests (issue 46)
    'test/imap/enable.test.ts',
    'test/imap/expunge.test.ts',
    'test/imap/idle.test.ts',
    'test/imap/quota.test.ts',

    'test/webhooks/events.test.ts',
    'test/webhooks/retries.test.ts',
    'test/webhooks/signing.test.ts',
    'test/webhooks/ssrf.test.ts',

    'test/outbound/api.test.ts',
    'test/outbound/delivery.test.ts',
    'test/outbound/forward.test.ts',
    'test/outbound/crash.test.ts',
    'test/outbound/faults.test.ts',
    'test/outbound/poison.test.ts',
    'test/outbound/large.test.ts',
    'test/outbound/retry.test.ts',
    'test/outbound/tls.test.ts',
    'test/outbound/migration.test.ts',
    'test/outbound/policy.test.ts',
    'test/outbound/retention.test.ts',
    'test/submission/api.test.ts',
    'test/submission/fuzz-auth.test.ts', // AUTH garbage on both ports (issue 41)
    'test/submission/fuzz-envelope.test.ts',
    'test/submission/fuzz-data.test.ts',
    'test/submission/crash.test.ts',
    'test/submission/delivery.test.ts',
    'test/submission/limits.test.ts',
    'test/submission/record-paths.test.ts',
    'test/submission/lockout.test.ts',
    'test/submission/login.test.ts',
    'test/submission/ports.test.ts',
    'test/submission/send-as.test.ts',
    'test/submission/tls.test.ts',
    'test/acme/failure.test.ts',
    'test/acme/issuance.test.ts',
    'test/acme/listeners.test.ts',
    'test/acme/precedence.test.ts',
    'test/acme/renewal.test.ts',
    'test/acme/restart.test.ts',
    'test/acme/schedule.test.ts',
    'test/aliases/resolver-cache.test.ts',
    'test/cli/concurrent-start.test.ts',
    'test/cli/backup-restore.test.ts',
    'test/http/hostile.test.ts',
    'test/legacy/mailboxes.test.ts',
    'test/webhooks/e2e.test.ts',
    'test/webhooks/sender.test.ts',
    'test/outbound/commit-batch.test.ts',
    'test/main/process.test.ts',
    'test/main/hostname-warning.test.ts',
    'test/main/readme-first-steps.test.ts', // README.md's first steps, run as a script, on PostgreSQL too
    'test/smtp/line-length.test.ts',
    'test/smtp/return-path.test.ts',
    // The dashboard in Chromium: it reads and writes through the same API, now served from PostgreSQL.
    'test/web/aliases.test.ts',
    'test/web/compression.test.ts',
    'test/web/domains.test.ts',
    'test/web/headers.test.ts',
    'test/web/icons.test.ts',
    'test/web/inbox.test.ts',
    'test/web/inbox-folders.test.ts',
    'test/web/import.test.ts',
    'test/web/layout.test.ts',
    'test/web/mailboxes.test.ts',
    'test/web/outbound.test.ts',
    'test/web/signin.test.ts',
    'test/web/spam.test.ts',
    'test/web/tables.test.ts',
    'test/web/webhooks.test.ts',
    // Spam policy before the 250 (DECISIONS.md section 18).
    'test/spam/policy/dnsbl.test.ts',
    'test/spam/policy/dmarc.test.ts',
    'test/spam/policy/rspamd.test.ts', // Debian's rspamd, started by test/helpers/rspamd.ts
    'test/web/sieve.test.ts',
    // Sieve storage, ManageSieve, delivery filter and vacation (DECISIONS.md section 19).
    'test/sieve-store/*.test.ts',
    'test/managesieve/*.test.ts',
    'test/vacation/*.test.ts',
  ],
};
