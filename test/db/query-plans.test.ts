import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { systemClock } from '../../src/clock.js';
import type { NodeSession } from '../../src/db/pg-session.js';
import { createFolderMessages } from '../../src/emails/folders/index.js';
import { createMarkers } from '../../src/mailstore/markers.js';
import { createPgPoolReads } from '../../src/emails/postgres/reads.js';
import { createEmailService } from '../../src/emails/service.js';
import { createEmailReads, type ListFilter } from '../../src/emails/store.js';
import { createEmailStore } from '../../src/emails/store.js';
import { createEmailWriter } from '../../src/mailstore/writer.js';
import { acceptGroup, type AcceptJob } from '../../src/mailstore/commits.js';
import { deliverBatch } from '../../src/mailstore/pipeline.js';
import { createIngestStore } from '../../src/mailstore/inbound-store.js';
import { postgresOutboundClaims } from '../../src/outbound/claims.js';
import { createOutboundStore } from '../../src/mailstore/outbound-store.js';
import { submissionStore } from '../../src/mailstore/submission-store.js';
import { createEventRecorder } from '../../src/webhooks/events.js';
import { seededDatabase, SEED, type Ran, type Seeded } from '../helpers/query-plans.js';

/*
 * The query plans of the hot paths (issue 47) on a store large enough for the planner to choose as
 * in production: one mailbox of SEED.bigMailbox messages among others, a stored-rows queue, a sent
 * outbound queue, ANALYZEd. Each case runs the product's own code on a handle that records the
 * statements it runs (so a query changed in the code is the query checked here) and reads the plan
 * of every one: EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL. A statement fails when it
 * scans a large table, or walks all of a mailbox's or tenant's rows where it looks up a few; cases
 * that list a folder or page through an index in order (`walks`) may walk, in index order only.
 */

/** Tables that grow with the store. */
const LARGE = ['emails', 'email_contents', 'email_imap', 'inbound', 'inbound_reservations', 'outbound', 'submission_sends', 'attachments', 'events'];
/** The large tables a statement reads, under their names and aliases. */
function largeNames(text: string): Set<string> {
  const names = new Set<string>();
  const KEYWORDS = /^(where|on|join|inner|left|cross|order|group|limit|set|using|natural)$/i;
  for (const m of text.matchAll(/\b(?:from|join|update|into)\s+"?(\w+)"?(?:\s+(?:as\s+)?"?(\w+)"?)?/gi)) {
    if (!LARGE.includes(m[1])) continue;
    names.add(m[1]);
    if (m[2] && !KEYWORDS.test(m[2])) names.add(m[2]);
  }
  return names;
}
/** A search on nothing more selective than a mailbox, a tenant or a mailbox's folder. */
/** Tables with a small fixed cap of rows per mailbox. */
const BOUNDED_PER_MAILBOX = ['sieve_scripts'];
const SQLITE_WALK = /^SEARCH \w+ USING (COVERING )?INDEX \w+ \((mailbox_id=\?|tenant_id=\?|mailbox_id=\? AND folder=\?)\)$/;
const PG_WALK = /(Index Cond|Recheck Cond): \((\(?(\w+\.)?(mailbox_id|tenant_id) = [^()]+\)?( AND \((\w+\.)?folder = [^()]+\))?)\)$/;

/** The faults of one statement's plan. */
function faults(s: Seeded, text: string, plan: string[], walks: boolean): string[] {
  const out: string[] = [];
  const large = largeNames(text);
  let table = '';
  for (const raw of plan) {
    const line = raw.trim().replace(/^->\s*/, '');
    table = /^(?:SEARCH|SCAN) (\w+)/.exec(line)?.[1] ?? / on (\w+)/.exec(line)?.[1] ?? table;
    // A mailbox's Sieve scripts are at most 10 (DECISIONS.md section 19): reading them all is no walk.
    if (BOUNDED_PER_MAILBOX.includes(table)) continue;
    if (s.dialect === 'sqlite') {
      const scan = /^SCAN (\w+)/.exec(line);
      if (scan && large.has(scan[1]) && !/VIRTUAL TABLE/.test(line)) out.push(`scans: ${line}`);
      if (!walks && SQLITE_WALK.test(line)) out.push(`walks a mailbox or tenant: ${line}`);
      if (walks && large.size > 0 && /USE TEMP B-TREE FOR ORDER BY/.test(line)) out.push(`sorts what it walks: ${line}`);
    } else {
      const seq = /Seq Scan on (\w+)/.exec(line);
      if (seq && LARGE.includes(seq[1])) out.push(`scans: ${line}`);
      if (!walks && PG_WALK.test(line)) out.push(`walks a mailbox or tenant: ${line}`);
    }
  }
  return out;
}

/** Which statistics the planner has (named in failures). */
let statistics = '';

/** Checks the plan of every statement `run` makes through the recording handles; `must` are plan lines one of them must show. */
async function checkPlans(t: ExecutionContext, s: Seeded, label: string, run: () => Promise<unknown>, opts: { walks?: boolean; whole?: boolean; must?: Partial<Record<'sqlite' | 'postgres', RegExp>> } = {}) {
  const name = `${label}${statistics}`;
  s.take();
  await run();
  const ran = s.take().filter((r) => /^\s*(select|with|update|delete|insert)/i.test(r.sql));
  t.true(ran.length > 0, `${name}: ran no statement`);
  const plans: Array<{ ran: Ran; plan: string[] }> = [];
  for (const r of ran) {
    // An INSERT without a SELECT has no plan worth reading.
    if (/^\s*insert/i.test(r.sql) && !/select/i.test(r.sql)) continue;
    const plan = await s.plan(r);
    plans.push({ ran: r, plan });
    const bad = opts.whole ? faults(s, r.sql, plan, true).filter((f) => !(s.dialect === 'postgres' && f.startsWith('scans: Seq Scan on emails'))) : faults(s, r.sql, plan, opts.walks ?? false);
    t.deepEqual(bad, [], `${name}:\n${r.sql}\n${plan.join('\n')}`);
  }
  const must = opts.must?.[s.dialect];
  if (must) t.true(plans.some((p) => p.plan.some((l) => must.test(l))), `${name}: no plan shows ${must}\n${plans.map((p) => `${p.ran.sql}\n${p.plan.join('\n')}`).join('\n\n')}`);
}

test('every hot-path query finds its rows by index on a large store', async (t) => {
  t.timeout(240_000);
  const s = await seededDatabase(t);
  // SQLite as the server runs it (no statistics), then as after an ANALYZE; PostgreSQL analysed (autovacuum).
  statistics = s.dialect === 'sqlite' ? ' (SQLite without statistics)' : ' (analysed)';
  await hotPaths(t, s, 1);
  if (s.dialect === 'sqlite') {
    await sql`ANALYZE`.execute(s.db);
    statistics = ' (SQLite analysed)';
    await hotPaths(t, s, 2);
  }
  // Sanity: the store is as large as the plans assume.
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM emails WHERE mailbox_id = ${s.bigMailbox}`.execute(s.db);
  t.is(Number(rows[0].n), SEED.bigMailbox + (s.dialect === 'sqlite' ? 4 : 2));
});

/** Every case once; `round` keeps the messages each round delivers apart. */
async function hotPaths(t: ExecutionContext, s: Seeded, round: number) {
  const db = s.recording;
  const pg = s.dialect === 'postgres';
  const clock = systemClock;
  const now = clock.now();
  const ingestStore = createIngestStore();
  const emailStore = createEmailStore();
  const markers = createMarkers(clock, (x) => emailStore.maxMarker(x));
  const events = createEventRecorder({ clock });
  const writer = createEmailWriter({ store: emailStore, markers, clock });
  const service = createEmailService({ db, store: emailStore, markers, events, clock, readThreads: 0 });
  const messages = createFolderMessages({ db, store: emailStore, markers, clock, service });
  const job = (messageId: string): AcceptJob => ({
    messageJson: JSON.stringify({
      messageId, fromEmail: 'a@remote.example', fromName: null, toEmail: 'big@big.example', cc: [], bcc: [], subject: 's', receivedAt: now,
      bodyText: 'hello', bodyHtml: null, headers: {}, attachments: [], auth: null,
    }),
    messageId, size: 100, target: { tenantId: s.tenantId, mailboxIds: [s.bigMailbox], forwards: [], address: 'big@big.example' },
  });

  // API ingest: the duplicate check walked the mailbox until it named imported = 0 (issue 47).
  let outcomes: Awaited<ReturnType<typeof acceptGroup>> = [];
  await checkPlans(t, s, 'API ingest (acceptGroup)', () => db.transaction().execute(async (trx) => {
    outcomes = await acceptGroup(trx, ingestStore, [job(s.storedMessageId), job(`<new-${round}-1@x>`), job(`<new-${round}-2@x>`)], now);
  }), { must: { sqlite: /emails_message \(mailbox_id=\? AND message_id=\?\)/, postgres: /emails_message/ } });
  t.deepEqual(outcomes.map((o) => o.ok), [false, true, true], 'a stored message_id is taken, new ones are not');

  // The ingest worker's picks, then the storage batch that stores them. (countQueuedSmtp walks
  // the queued rows' partial index, once, at start: the backlog, not the store.)
  let queued: number[] = [];
  await checkPlans(t, s, 'ingest worker picks queued rows', async () => {
    queued = (await ingestStore.queued(db, 0, 64)).map((r) => r.id);
    await ingestStore.loadWithoutRaw(db, queued);
  });
  t.is(queued.length, 2);
  await checkPlans(t, s, 'storage batch (deliverBatch)', () => db.transaction().execute((trx) =>
    deliverBatch(trx, { store: ingestStore, writer, events }, { apiIds: queued, prepared: [], failed: [] }, now)));

  // SMTP ingest: quota at RCPT. Submission: the daily count.
  await checkPlans(t, s, 'SMTP RCPT quota', () => ingestStore.quotas(db, [s.bigMailbox]));
  await checkPlans(t, s, 'submission daily count', () => submissionStore.recentSends(db, s.bigMailbox, now));

  // Outbound claims.
  if (pg) {
    const session = { query: (text: string, params?: unknown[]) => s.recordingPool!.query(text, params) } as unknown as NodeSession;
    await checkPlans(t, s, 'outbound claim (PostgreSQL)', () => postgresOutboundClaims(session).next(now, 10, []));
  } else {
    await checkPlans(t, s, 'outbound claim (SQLite)', () => createOutboundStore().due(db, now, 10, []));
  }

  // IMAP SELECT lists the folder (a walk in UID order by design); the rest look rows up.
  await checkPlans(t, s, 'IMAP SELECT', async () => {
    await messages.folders(s.bigMailbox);
    await messages.highestModseq(s.tenantId);
  }, { walks: true });
  // Its list of the folder reads the whole folder by design: any plan that stays in the mailbox will do
  // (PostgreSQL reads a mailbox that is most of the table sequentially).
  await checkPlans(t, s, 'IMAP SELECT (the folder)', async () => {
    await messages.entries(s.bigMailbox, 'INBOX');
    await messages.counts(s.bigMailbox, 'INBOX');
  }, { whole: true });
  // A later SELECT of the same folder reads only the mailbox's changes after the kept list's marker
  // (emails/folders/snapshots.ts): a range of the tenant's marker index, never the mailbox.
  await checkPlans(t, s, 'IMAP SELECT (the folder, read first)', () => messages.folderEntries(s.tenantId, s.bigMailbox, 'INBOX'), { whole: true });
  await checkPlans(t, s, 'IMAP SELECT again (the kept folder caught up)', () => messages.folderEntries(s.tenantId, s.bigMailbox, 'INBOX'),
    { must: { sqlite: /emails_tenant_seq \(tenant_id=\? AND updated_seq>\?\)/, postgres: /emails_tenant_seq/ } });
  const recent = Array.from({ length: 50 }, (_, i) => s.newestId - 1 - i);
  await checkPlans(t, s, 'IMAP FETCH and SEARCH', async () => {
    await messages.meta(s.bigMailbox, recent);
    await messages.summaries(s.bigMailbox, { ids: recent });
    await messages.summaries(s.bigMailbox, { folder: 'INBOX', fromUid: SEED.bigMailbox - 100, toUid: SEED.bigMailbox });
  });
  await checkPlans(t, s, 'IMAP STORE', async () => {
    await messages.writeFlags(s.bigMailbox, [{ id: recent[0], flags: '\\Flagged' }]);
    await messages.markUnread(s.bigMailbox, [recent[2]]);
    await service.markRead(s.tenantId, recent[1]);
  });
  await checkPlans(t, s, 'IMAP changes since a marker (CONDSTORE, IDLE)', async () => {
    await messages.changes(s.tenantId, s.newestMarker - 100 * 16);
    await messages.changedMailboxes(s.tenantId, s.newestMarker - 100 * 16);
  });

  // The REST list, get and sync.
  const filters: ListFilter[] = [
    { tenantId: s.tenantId }, { tenantId: s.tenantId, mailboxId: s.bigMailbox }, { tenantId: s.tenantId, mailboxId: s.bigMailbox, folder: 'INBOX' },
  ];
  const pos = { receivedAt: Date.UTC(2024, 0, 1) + (SEED.bigMailbox - 500) * 60_000, id: SEED.bigMailbox - 500, side: 'below' as const };
  const since = { above: s.newestMarker - 100 * 16 };
  if (pg) {
    const reads = createPgPoolReads(s.recordingPool!);
    for (const f of filters) {
      await checkPlans(t, s, `REST list ${JSON.stringify(f)}`, async () => {
        await reads.firstPage(f, 51);
        await reads.cursorPage(f, pos, 51);
      }, { walks: true });
    }
    await checkPlans(t, s, 'REST get', async () => { await reads.get(s.tenantId, s.newestId); await reads.attachmentsOf(s.newestId); });
    await checkPlans(t, s, 'REST sync', async () => {
      await reads.syncPage(s.tenantId, since, 101);
      await reads.syncPage(s.tenantId, since, 101, s.bigMailbox);
    });
  } else {
    const reads = createEmailReads(s.recordingReader!);
    for (const f of filters) {
      await checkPlans(t, s, `REST list ${JSON.stringify(f)}`, async () => {
        reads.listPage(f, null, 51);
        reads.listPage(f, pos, 51);
        reads.anyBeyond(f, { ...pos, side: 'above' });
      }, { walks: true });
    }
    await checkPlans(t, s, 'REST get', async () => { reads.get(s.tenantId, s.newestId); reads.attachmentsOf(s.newestId); });
    await checkPlans(t, s, 'REST sync', async () => {
      reads.syncPage(s.tenantId, since, 101);
      reads.syncPage(s.tenantId, since, 101, s.bigMailbox);
    });
  }
}
