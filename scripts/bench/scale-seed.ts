/**
 * The store of the scale benchmark (scale.ts): tenant `bench` with a key, domain bench.test and
 * its mailbox inbox@bench.test (smtp-load.ts's RCPT, with an IMAP password), and `emails` messages
 * of about 5 KB already stored in that one mailbox, written in transactions of 1,000 by the very
 * writer the storage batch uses (mailstore/writer.ts, with their `email.received` events): exactly
 * what API ingest stores. On SQLite in the data dir, on PostgreSQL at `url`.
 */
import { systemClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connection.js';
import { openDatabase } from '../../src/db/connection.js';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { createDomainStore } from '../../src/domains/store.js';
import { createMarkers } from '../../src/mailstore/markers.js';
import { createEmailStore } from '../../src/emails/store.js';
import { createEmailWriter, type Copy } from '../../src/mailstore/writer.js';
import { hashPassword } from '../../src/mailboxes/passwords.js';
import { createMailboxStore } from '../../src/mailboxes/store.js';
import { createTenantService } from '../../src/tenants/service.js';
import { createTenantStore } from '../../src/tenants/store.js';
import { createEventRecorder } from '../../src/webhooks/events.js';
import { DOMAIN, RCPT } from './smtp-load.js';

export const PASSWORD = 'bench-password-1';
const BATCH = 1000;

/** What the benchmark needs of the seeded store. */
export interface SeededStore {
  key: string;
  mailboxId: number;
  seconds: number;
}

/** Seeds the store (SQLite data dir, or the PostgreSQL database at `url`) with the mailbox and `emails` messages in it. */
export async function seedStore(dataDir: string, url: string | null, emails: number): Promise<SeededStore> {
  const database = url ? await openPostgresDatabase(url) : await openDatabase(dataDir);
  const db: Db = database.db;
  const clock = systemClock;
  const started = performance.now();
  try {
    const tenants = createTenantService({ db, store: createTenantStore(), clock, cooldownSeconds: 300 });
    const tenantId = await tenants.createTenant('bench', { plan: true });
    const key = await tenants.createKey('bench', 'read,write,inbound');
    const domainId = await createDomainStore().insert(db, {
      tenant_id: tenantId, hostname: DOMAIN, parent_id: null, domain_type: 'root',
      total_mailbox_allowed: 100, verification_token: '0'.repeat(32), created_at: clock.now(),
    });
    await createMailboxStore().insert(db, [{
      tenant_id: tenantId, domain_id: domainId, address: RCPT, display_name: 'Inbox', password_hash: await hashPassword(PASSWORD), created_at: clock.now(),
    }]);
    const mailboxId = Number((await db.selectFrom('mailboxes').select('id').where('address', '=', RCPT).executeTakeFirstOrThrow()).id);
    const store = createEmailStore();
    const markers = createMarkers(clock, (x) => store.maxMarker(x));
    const writer = createEmailWriter({ store, markers, clock });
    const events = createEventRecorder({ clock });
    const line = 'The quick brown fox jumps over the lazy dog while the mail server keeps up. ';
    const body = Array.from({ length: 66 }, () => line).join('\n');
    // Older than anything the benchmark delivers, one a minute.
    const start = Date.now() - emails * 60_000 - 3_600_000;
    for (let done = 0; done < emails; done += BATCH) {
      const copies: Copy[] = [];
      for (let i = done; i < Math.min(emails, done + BATCH); i++) {
        copies.push({
          tenantId, mailboxId, inboundId: null, toEmail: RCPT, size: body.length + 300,
          message: {
            messageId: `<seed-${i}@seed.example>`, fromEmail: `sender${i % 500}@seed.example`, fromName: `Sender ${i % 500}`, toEmail: RCPT,
            cc: [], bcc: [], subject: `Seeded message ${i}`, receivedAt: start + i * 60_000, bodyText: `${i} ${body}`, bodyHtml: null,
            headers: { 'message-id': `<seed-${i}@seed.example>` }, attachments: [], auth: null,
          },
        });
      }
      await db.transaction().execute(async (trx) => {
        const created = await writer.storeCopies(trx, copies);
        await events.record(trx, created.map((c) => ({ tenantId, type: 'email.received' as const, emailId: c.id, mailboxId: c.mailboxId })));
      });
      if ((done + BATCH) % 50_000 === 0) process.stderr.write(`seeded ${done + BATCH}\n`);
    }
    if (url) await (await import('kysely')).sql`VACUUM ANALYZE`.execute(db);
    else (database as Awaited<ReturnType<typeof openDatabase>>).sqlite.pragma('wal_checkpoint(TRUNCATE)');
    return { key, mailboxId, seconds: Math.round((performance.now() - started) / 100) / 10 };
  } finally {
    await database.close();
  }
}
