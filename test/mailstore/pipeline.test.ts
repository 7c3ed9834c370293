import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { manualClock } from '../../src/clock.js';
import { openDatabase, type Db } from '../../src/db/connection.js';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { folderStore } from '../../src/mailstore/folder-store.js';
import { createMarkers } from '../../src/mailstore/markers.js';
import { createEmailStore } from '../../src/emails/store.js';
import { createEmailWriter } from '../../src/mailstore/writer.js';
import { acceptGroup } from '../../src/mailstore/commits.js';
import { encodeMessage } from '../../src/inbound/encoded-message.js';
import type { StoredMessage, Target } from '../../src/inbound/message.js';
import { createIngestStore } from '../../src/mailstore/inbound-store.js';
import { deliverBatch } from '../../src/mailstore/pipeline.js';
import type { DecisionSteps, Placement } from '../../src/inbound/delivery-steps.js';
import { createEventRecorder } from '../../src/webhooks/events.js';
import { tempDir } from '../helpers/app.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';

/*
 * The delivery pipeline's batch transaction (src/mailstore/pipeline.ts) with decision steps that
 * do what the spam filter and Sieve will: place copies in another folder with keywords and a
 * prepended header, discard one, redirect and reply. On the lane's database (SQLite, or
 * PostgreSQL with MAILSTEAD_TEST_DATABASE=postgres).
 */

const T0 = Date.UTC(2026, 0, 1);
const SPAM_HEADER = 'X-Spam-Status: Yes, score=9.5 required=5.0 tests=BLOCKLIST\r\n';

async function world(t: ExecutionContext) {
  let db: Db;
  if (onPostgres) {
    const database = await openPostgresDatabase(await freshPostgresDatabase(t));
    t.teardown(() => database.close());
    db = database.db;
  } else {
    const database = await openDatabase(tempDir(t));
    t.teardown(() => database.close());
    db = database.db;
  }
  await sql`INSERT INTO tenants (id, name, plan_active, is_admin, created_at) VALUES (1, 'one', 1, 0, ${sql.lit(T0)})`.execute(db);
  await sql`INSERT INTO domains (id, tenant_id, hostname, parent_id, domain_type, total_mailbox_allowed, verification_token, created_at)
    VALUES (1, 1, 'one.example', NULL, 'root', 100, ${'0'.repeat(32)}, ${sql.lit(T0)})`.execute(db);
  for (const [id, address] of [[1, 'junk@one.example'], [2, 'gone@one.example'], [3, 'nofolder@one.example']] as const) {
    await sql`INSERT INTO mailboxes (id, tenant_id, domain_id, address, display_name, password_hash, quota_mb, created_at)
      VALUES (${id}, 1, 1, ${address}, '', 'x', 0, ${sql.lit(T0)})`.execute(db);
  }
  await folderStore.ensureDefaults(db, [1, 2, 3], T0);
  const clock = manualClock(T0);
  const emailStore = createEmailStore();
  const markers = createMarkers(clock, (x) => emailStore.maxMarker(x));
  const deps = {
    store: createIngestStore(),
    writer: createEmailWriter({ store: emailStore, markers, clock }),
    events: createEventRecorder({ clock }),
  };
  return { db, deps };
}

const message = (messageId: string): StoredMessage => ({
  messageId, fromEmail: 'sender@elsewhere.example', fromName: null, toEmail: 'junk@one.example', cc: [], bcc: [],
  subject: 'Cheap watches', receivedAt: T0, bodyText: 'Buy now', bodyHtml: null,
  headers: { subject: 'Cheap watches', from: 'sender@elsewhere.example' }, attachments: [], auth: null,
});

const targets: Target[] = [1, 2, 3].map((id) => ({ tenantId: 1, mailboxIds: [id], forwards: [], address: ['junk', 'gone', 'nofolder'][id - 1] + '@one.example' }));

/** Junk with $Junk and the spam header for mailbox 1; mailbox 2 discarded; mailbox 3 into a folder it lacks; a redirect and a reply from mailbox 1. */
const spamAndSieve: DecisionSteps = {
  classify: async (_trx, batch) => batch.map(({ recipients }) => recipients.map((): Placement => ({ folder: 'Junk', keywords: ['$Junk'], prepend: SPAM_HEADER, spam: { verdict: 'junk' } }))),
  filter: async (_trx, d, recipients, classified) => ({
    placements: recipients.map((r, i) => (r.mailboxId === 2 ? null : r.mailboxId === 3 ? { folder: 'Missing', keywords: ['$Label1'] } : classified[i])),
    effects: {
      redirects: [{ recipient: recipients[0], to: 'onward@far.example' }],
      replies: [{ recipient: recipients[0], to: d.mailFrom ?? '', raw: Buffer.from('Subject: Auto: Cheap watches\r\n\r\nAway\r\n') }],
    },
  }),
};

const emailsOf = (db: Db) => sql<{ id: number; mailbox_id: number; folder: string; flags: string; read_at: number | null; imported: number; uid: number }>`
  SELECT id, mailbox_id, folder, flags, read_at, imported, uid FROM emails ORDER BY mailbox_id`.execute(db).then((r) => r.rows.map((x) => ({ ...x, id: Number(x.id), mailbox_id: Number(x.mailbox_id), imported: Number(x.imported), uid: Number(x.uid) })));

test('SMTP mail: copies filed where the steps place them, with keywords and the prepended header; discard, redirect and reply queued with them', async (t) => {
  const { db, deps } = await world(t);
  const raw = Buffer.from('From: sender@elsewhere.example\r\nSubject: Cheap watches\r\nMessage-ID: <w1@elsewhere.example>\r\n\r\nBuy now\r\n');
  const m = message('<w1@elsewhere.example>');
  const [id] = await deps.store.insertInbound(db, [{
    kind: 'smtp', message: JSON.stringify({ mailFrom: 'sender@elsewhere.example', recipients: targets.map((x) => x.address) }), targets: JSON.stringify(targets),
    raw, raw_path: null, size: raw.length, error: null, created_at: T0, done_at: null,
  }]);
  const result = await db.transaction().execute((trx) => deliverBatch(trx, { ...deps, steps: spamAndSieve }, {
    apiIds: [], failed: [],
    prepared: [{ id, targets, encoded: encodeMessage({ ...m, imap: { size: raw.length, envelope: '()', bodystructure: '()' } }), mailFrom: 'sender@elsewhere.example', size: raw.length, rawPath: null }],
  }, T0));
  t.is(result.stored, 2);
  t.is(result.forwarded, 2, 'the redirect and the reply');
  const emails = await emailsOf(db);
  t.like(emails[0], { mailbox_id: 1, folder: 'Junk', flags: '$Junk', read_at: null, imported: 0, uid: 1 });
  t.like(emails[1], { mailbox_id: 3, folder: 'INBOX', flags: '$Label1', read_at: null, imported: 0 }, 'a folder the mailbox lacks files into INBOX');
  t.is(emails.length, 2, 'the discarded copy is not stored');

  const junk = emails[0].id;
  const own = await db.selectFrom('email_raw').select('raw').where('email_id', '=', junk).executeTakeFirstOrThrow();
  t.is(Buffer.from(own.raw).toString('latin1'), SPAM_HEADER + raw.toString('latin1'), 'the stored bytes start with the prepended header');
  const contents = await db.selectFrom('email_contents').select(['inbound_id', 'headers']).where('email_id', '=', junk).executeTakeFirstOrThrow();
  t.is(contents.inbound_id, null);
  t.is(Object.keys(JSON.parse(contents.headers))[0], 'x-spam-status');
  const imap = await db.selectFrom('email_imap').select('size').where('email_id', '=', junk).executeTakeFirstOrThrow();
  t.is(Number(imap.size), raw.length + SPAM_HEADER.length);
  const plain = await db.selectFrom('email_contents').select('inbound_id').where('email_id', '=', emails[1].id).executeTakeFirstOrThrow();
  t.is(Number(plain.inbound_id), id, 'a copy without a prepend shares the queued bytes');

  const outbound = await db.selectFrom('outbound').select(['kind', 'email_id', 'inbound_id', 'message_ref', 'mail_from', 'rcpt_to', 'via_domain']).orderBy('id').execute();
  t.like(outbound[0], { kind: 'forward', inbound_id: id, mail_from: 'sender@elsewhere.example', rcpt_to: 'onward@far.example', via_domain: 'one.example' });
  t.is(Number(outbound[0].email_id), junk);
  t.like(outbound[1], { kind: 'dsn', mail_from: '', rcpt_to: 'sender@elsewhere.example', inbound_id: null });
  const reply = await db.selectFrom('outbound_messages').select('raw').where('id', '=', Number(outbound[1].message_ref)).executeTakeFirstOrThrow();
  t.regex(Buffer.from(reply.raw).toString(), /^Subject: Auto: Cheap watches/);
  const row = await db.selectFrom('inbound').select('status').where('id', '=', id).executeTakeFirstOrThrow();
  t.not(row.status, 'queued');
  const used = await db.selectFrom('mailboxes').select(['id', 'used_bytes']).orderBy('id').execute();
  t.deepEqual(used.map((u) => Number(u.used_bytes)), [raw.length + SPAM_HEADER.length, 0, raw.length]);
});

test('API mail: the placement files it into Junk with its keyword, the prepended field first among its headers', async (t) => {
  const { db, deps } = await world(t);
  const m = message('<api1@elsewhere.example>');
  const target = { tenantId: 1, mailboxIds: [1], forwards: [], address: 'junk@one.example' };
  await db.transaction().execute((trx) => acceptGroup(trx, deps.store, [{ messageJson: JSON.stringify(m), messageId: m.messageId, target, size: 100 }], T0));
  const [row] = await db.selectFrom('inbound').select('id').execute();
  await db.transaction().execute((trx) => deliverBatch(trx, { ...deps, steps: spamAndSieve }, { apiIds: [Number(row.id)], prepared: [], failed: [] }, T0));
  const emails = await emailsOf(db);
  t.is(emails.length, 1);
  t.like(emails[0], { mailbox_id: 1, folder: 'Junk', flags: '$Junk', read_at: null });
  const contents = await db.selectFrom('email_contents').select('headers').where('email_id', '=', emails[0].id).executeTakeFirstOrThrow();
  const headers = JSON.parse(contents.headers) as Record<string, string>;
  t.is(Object.keys(headers)[0], 'x-spam-status');
  t.is(headers['x-spam-status'], 'Yes, score=9.5 required=5.0 tests=BLOCKLIST');
});

test('the default steps pass every copy through to INBOX without keywords', async (t) => {
  const { db, deps } = await world(t);
  const m = message('<plain@elsewhere.example>');
  await db.transaction().execute((trx) => acceptGroup(trx, deps.store, [{ messageJson: JSON.stringify(m), messageId: m.messageId, target: targets[0], size: 100 }], T0));
  const [row] = await db.selectFrom('inbound').select('id').execute();
  const result = await db.transaction().execute((trx) => deliverBatch(trx, deps, { apiIds: [Number(row.id)], prepared: [], failed: [] }, T0));
  t.is(result.forwarded, 0);
  const emails = await emailsOf(db);
  t.like(emails[0], { mailbox_id: 1, folder: 'INBOX', flags: '', read_at: null, imported: 0, uid: 1 });
  t.is(emails.length, 1);
});
