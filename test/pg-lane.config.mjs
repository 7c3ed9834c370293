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
    'test/db/postgres.test.ts', // the seam itself: migrations, SKIP LOCKED claims, advisory locks
    // Two server processes on one database (test/helpers/nodes.ts); PostgreSQL only, so the SQLite lane leaves them out.
    'test/db/two-nodes-cron.test.ts',
    'test/db/two-nodes-lockout.test.ts',
    'test/db/two-nodes-outbound.test.ts',
    'test/db/two-nodes-tasks.test.ts',
    'test/db/two-nodes-webhooks.test.ts',
    'test/db/two-nodes-changes.test.ts', // committed mail changes relayed between nodes (LISTEN/NOTIFY)
    'test/db/two-nodes-mail.test.ts', // SMTP on either node listed once; IDLE on one hears of mail on the other
    'test/aliases/create.test.ts',
    'test/aliases/delete.test.ts',
    'test/aliases/edit.test.ts',
    'test/aliases/resolve.test.ts',
    'test/dns/check.test.ts',
    'test/dns/inconclusive.test.ts',
    'test/dns/isolation.test.ts',
    'test/dns/route.test.ts',
    'test/dns/schedule.test.ts',
    'test/domains/create.test.ts',
    'test/domains/domains.test.ts',
    'test/domains/validation.test.ts',
    'test/http/auth.test.ts',
    'test/http/errors.test.ts',
    'test/http/openapi.test.ts',
    'test/legacy/aliases.test.ts',
    'test/legacy/domains.test.ts',
    'test/legacy/routing.test.ts',
    'test/mailboxes/bulk.test.ts',
    'test/mailboxes/delete.test.ts',
    'test/mailboxes/list.test.ts',
    'test/mailboxes/lockout.test.ts',
    'test/mailboxes/redaction.test.ts',
    'test/mailboxes/single.test.ts',
    'test/tasks/queue.test.ts',
    'test/webhooks/crud.test.ts',
    'test/emails/list.test.ts',
    'test/emails/search.test.ts',
    'test/emails/state.test.ts',
    'test/emails/attachments.test.ts',
    'test/emails/folders.test.ts',
    'test/emails/isolation.test.ts',
    'test/emails/prefix.test.ts',
    'test/ingest/inbound.test.ts',
    'test/ingest/smtp.test.ts',
    'test/ingest/routing.test.ts',
    'test/ingest/backlog-metrics.test.ts',
    'test/ingest/stop-parsing.test.ts',
    'test/ingest/storage-failure.test.ts',
    'test/smtp/authentication.test.ts',
    'test/smtp/corpus-delivery.test.ts',
    'test/smtp/crash.test.ts',
    'test/smtp/delivery.test.ts',
    'test/smtp/large-attachment.test.ts',
    'test/smtp/protocol.test.ts',
    'test/smtp/shutdown.test.ts',
    'test/smtp/starttls.test.ts',
    'test/smtp/timeouts.test.ts',
    'test/ingest/crash.test.ts',
    'test/ingest/sweep.test.ts',
  ],
};
