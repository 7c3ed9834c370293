import test, { type ExecutionContext } from 'ava';
import { manualClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/connection.js';
import type { Db } from '../../src/db/connection.js';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { decodeListCursor } from '../../src/emails/cursor.js';
import { createMarkers } from '../../src/mailstore/markers.js';
import { createPgEmailReads } from '../../src/emails/pg-reads.js';
import { runPgReadJob } from '../../src/emails/pg-reading.js';
import { encodePgSearch, pgSearch } from '../../src/emails/pg-search.js';
import { createEmailService, type EmailService, type ListRequest } from '../../src/emails/service.js';
import { createEmailStore } from '../../src/emails/store.js';
import { createEmailWriter, type Copy } from '../../src/mailstore/writer.js';
import { createEventRecorder } from '../../src/webhooks/events.js';
import { tempDir } from '../helpers/app.js';
import { freshPostgresDatabase } from '../helpers/pg.js';

/*
 * The PostgreSQL reads (src/emails/pg-reads.ts) answer exactly as SQLite's: the same mail is
 * written by the emails writer into a SQLite and a PostgreSQL database, in the same order and at
 * the same times (so ids and update markers match), and every answer of the reading service is
 * compared as JSON text: lists with filters, cursors both ways, search, get, sync, mark read and
 * delete. Runs both databases in either lane (the PostgreSQL cluster is started by the test).
 */

const T0 = Date.UTC(2024, 2, 1, 9, 0, 0);
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

interface Side {
  name: string; db: Db; service: EmailService; clock: ReturnType<typeof manualClock>;
  /** Turns the mail of a mailbox into tombstones, as a mailbox deletion does (emails/index.ts). */
  purge(mailboxId: number): Promise<void>;
}


/** The mail both databases hold: tenants 1 and 2, mailboxes 1 and 2 of tenant 1 and 3 of tenant 2. */
function copies(): Copy[] {
  const out: Copy[] = [];
  for (let i = 0; i < 70; i++) {
    const tenantId = i % 7 === 6 ? 2 : 1;
    const mailboxId = tenantId === 2 ? 3 : 1 + (i % 2);
    // Dates out of arrival order, with ties (a cursor breaks them by id).
    const receivedAt = T0 + ((i * 37) % 50) * 60_000;
    const words = `${WORDS[i % 10]} ${WORDS[(i * 3) % 10]}`;
    out.push({
      tenantId, mailboxId, inboundId: null, toEmail: `inbox${mailboxId}@example.test`, size: 1000 + i,
      message: {
        messageId: `<m${i}@sender.example>`, fromEmail: i % 5 === 0 ? 'carla.finance@acme.example' : `sender${i % 4}@mail.example`,
        fromName: i % 3 === 0 ? null : `Sender Nümber ${i % 4}`, toEmail: `inbox${mailboxId}@example.test`, cc: i % 4 === 0 ? ['cc@example.test'] : [], bcc: [],
        subject: i % 9 === 0 ? `Crème brûlée ${words} #${i}` : `Report ${words} #${i}`, receivedAt,
        bodyText: i % 6 === 0 ? null : `Body of ${i}: the ${WORDS[(i + 5) % 10]} numbers are up, see foo-bar.example/x?y=1`,
        bodyHtml: i % 6 === 0 ? `<p>Html <b>${WORDS[(i + 2) % 10]}</b> caf&eacute;</p>` : null,
        headers: { 'x-seq': String(i) }, auth: i % 2 ? { spf: 'pass', dkim: 'none', dmarc: null } as never : null,
        attachments: i % 8 === 0 ? [{ filename: `f${i}.txt`, contentType: 'text/plain', size: 5, sha256: 'a'.repeat(64), contentId: null, disposition: 'attachment' }] : [],
      },
    });
  }
  return out;
}

async function seed(db: Db, now: number): Promise<void> {
  for (const t of [1, 2]) await db.insertInto('tenants').values({ id: t, name: `t${t}`, plan_active: 1, is_admin: 0, created_at: now } as never).execute();
  for (const [id, tenant] of [[1, 1], [2, 1], [3, 2]]) {
    await db.insertInto('domains').values({ id, tenant_id: tenant, hostname: `d${id}.example.test`, domain_type: 'root', total_mailbox_allowed: 10, verification_token: 'x', created_at: now } as never).execute();
    await db.insertInto('mailboxes').values({ id, tenant_id: tenant, domain_id: id, address: `inbox${id}@example.test`, password_hash: 'x', created_at: now } as never).execute();
  }
}

async function side(t: ExecutionContext, name: string, db: Db): Promise<Side> {
  const clock = manualClock(T0 + 3_600_000);
  const store = createEmailStore();
  const markers = createMarkers(clock, (x) => store.maxMarker(x));
  await seed(db, clock.now());
  const writer = createEmailWriter({ store, markers, clock });
  // In batches, as the storage thread writes them; the clock moves between batches.
  const all = copies();
  for (let i = 0; i < all.length; i += 16) {
    await db.transaction().execute(async (trx) => {
      await writer.storeCopies(trx, all.slice(i, i + 16));
      await markers.flush(trx);
    });
    clock.advance(1000);
  }
  const service = createEmailService({ db, store, markers, events: createEventRecorder({ clock }), clock, readThreads: 0 });
  t.truthy(service, name);
  const purge = (mailboxId: number) => db.transaction().execute(async (trx) => {
    const ids = await store.idsInMailboxes(trx, [mailboxId]);
    await markers.ready(trx);
    await store.tombstone(trx, ids, clock.now(), () => markers.next());
    await markers.flush(trx);
  });
  return { name, db, service, clock, purge };
}

async function bothSides(t: ExecutionContext): Promise<[Side, Side]> {
  const lite = await openDatabase(tempDir(t));
  t.teardown(() => lite.close());
  const pg = await openPostgresDatabase(await freshPostgresDatabase(t));
  t.teardown(() => pg.close());
  return [await side(t, 'sqlite', lite.db), await side(t, 'postgres', pg.db)];
}

/** Both answers (JSON text, or the error's status and reason) of one call. */
async function same(t: ExecutionContext, [a, b]: [Side, Side], what: string, call: (s: EmailService) => Promise<string>): Promise<string> {
  const run = (s: Side) => call(s.service).catch((err: { status?: number; message?: string }) => `error ${err.status} ${err.message}`);
  const [x, y] = await Promise.all([run(a), run(b)]);
  t.is(y, x, what);
  return x;
}

/** Walks every page forward from the first, then back from the last, on both sides. */
async function walk(t: ExecutionContext, sides: [Side, Side], base: Omit<ListRequest, 'perPage' | 'cursor'>, perPage: number): Promise<number> {
  const label = JSON.stringify(base);
  let cursor: string | undefined;
  let pages = 0;
  let last = '';
  for (let i = 0; i < 100; i++) {
    last = await same(t, sides, `${label} page ${i}`, (s) => s.listBody(1, { ...base, perPage, cursor }));
    pages++;
    const next = JSON.parse(last).meta?.next_cursor as string | null | undefined;
    if (!next) break;
    cursor = next;
  }
  let prev = JSON.parse(last).meta?.prev_cursor as string | null | undefined;
  for (let i = 0; prev && i < 100; i++) {
    const back = await same(t, sides, `${label} back ${i}`, (s) => s.listBody(1, { ...base, perPage, cursor: prev! }));
    prev = JSON.parse(back).meta.prev_cursor;
  }
  return pages;
}

test('lists, cursors both ways, filters and search answer on PostgreSQL exactly as on SQLite', async (t) => {
  const sides = await bothSides(t);
  const filters: Array<Omit<ListRequest, 'perPage' | 'cursor'>> = [
    { folder: 'INBOX' },
    { folder: 'INBOX', mailboxId: 2 },
    { folder: 'INBOX', mailboxId: 3 },
    { folder: 'INBOX', unread: true },
    { folder: 'INBOX', since: T0 + 10 * 60_000, before: T0 + 30 * 60_000 },
    { folder: 'Sent' },
    { folder: 'INBOX', q: 'alpha' },
    { folder: 'INBOX', q: 'report delta' },
    { folder: 'INBOX', q: 'rep' },
    { folder: 'INBOX', q: '"numbers are up"' },
    { folder: 'INBOX', q: '"are numbers"' },
    { folder: 'INBOX', q: 'carla.finance@acme.example' },
    { folder: 'INBOX', q: 'acme' },
    { folder: 'INBOX', q: 'creme brulee' },
    { folder: 'INBOX', q: 'CAFÉ' },
    { folder: 'INBOX', q: 'numbér' },
    { folder: 'INBOX', q: 'foo-ba' },
    { folder: 'INBOX', q: 'foo-bar.example/x' },
    { folder: 'INBOX', q: 'echo', mailboxId: 1, since: T0 + 5 * 60_000 },
    { folder: 'INBOX', q: '"golf' },
  ];
  for (const f of filters) for (const perPage of [1, 7, 100]) t.true(await walk(t, sides, f, perPage) >= 1);
  // The comparisons above are of real answers, not of two empty lists.
  const count = async (f: Omit<ListRequest, 'perPage' | 'cursor'>) => JSON.parse(await sides[1].service.listBody(1, { ...f, perPage: 100 })).data.length as number;
  t.is(await count({ folder: 'INBOX' }), 60);
  t.is(await count({ folder: 'INBOX', q: 'alpha' }), 13);
  t.is(await count({ folder: 'INBOX', q: 'creme brulee' }), 7);
  t.is(await count({ folder: 'INBOX', q: 'acme' }), 12);
  t.is(await count({ folder: 'INBOX', q: '"numbers are up"' }), 50);
  t.is(await count({ folder: 'INBOX', q: '"are numbers"' }), 0);
  t.is(await count({ folder: 'INBOX', q: 'foo-ba' }), 50);
});

test('hostile search text never errors and finds the same on both databases', async (t) => {
  const sides = await bothSides(t);
  const hostile = [
    '"', '""', '*', 'alpha*', '*alpha', '-alpha', 'alpha -bravo', 'NOT alpha', 'alpha OR zzz', 'NEAR(alpha bravo)', '(alpha', 'alpha)',
    'subject:alpha', "alpha'bravo", 'alpha & bravo', 'alpha | bravo', '!alpha', 'alpha:*', 'a:* & !b', "'", "''alpha''", '\\',
    '\u0000', 'a\u0000b', '"alpha\u0000bravo"', '%', '_', ';DROP TABLE emails;--', 'x'.repeat(3000), `${'y'.repeat(500)} alpha`,
    '<->', 'alpha <-> bravo', 'alpha<2>bravo', '日本語', 'Ünïcödé', '😀 alpha', '\u200b',
  ];
  for (const q of hostile) {
    const body = await same(t, sides, JSON.stringify(q), (s) => s.listBody(1, { folder: 'INBOX', q, perPage: 25 }));
    t.true(body.startsWith('{"status":"success"'), JSON.stringify(q));
  }
});

test('get, sync with tombstones, mark read and delete answer on PostgreSQL exactly as on SQLite', async (t) => {
  const sides = await bothSides(t);
  for (const id of [1, 2, 7, 9, 16, 70, 71, 0]) await same(t, sides, `get ${id}`, (s) => s.getBody(1, id));
  await same(t, sides, 'get of another tenant', (s) => s.getBody(2, 1));
  const sync = async (label: string) => {
    for (const perPage of [5, 100]) {
      let cursor: string | undefined;
      for (let i = 0; i < 50; i++) {
        const body = await same(t, sides, `${label} sync ${perPage}/${i}`, (s) => s.syncBody(1, { since: T0, cursor, perPage }));
        cursor = JSON.parse(body).meta.next_cursor ?? undefined;
        if (!cursor) break;
      }
    }
    await same(t, sides, `${label} sync of a mailbox`, (s) => s.syncBody(1, { since: T0, perPage: 100, mailboxId: 2 }));
  };
  await sync('before');
  for (const [a, b] of [sides, [sides[1], sides[0]]] as const) t.is(a.clock.now(), b.clock.now());
  await same(t, sides, 'read 3', (s) => s.markRead(1, 3).then(() => 'ok'));
  await same(t, sides, 'read 3 again', (s) => s.markRead(1, 3).then(() => 'ok'));
  await same(t, sides, 'read of another tenant', (s) => s.markRead(2, 4).then(() => 'ok'));
  for (const side of sides) side.clock.advance(5000);
  await same(t, sides, 'delete 4', (s) => s.remove(1, 4).then(() => 'ok'));
  await same(t, sides, 'delete 4 again', (s) => s.remove(1, 4).then(() => 'ok'));
  await same(t, sides, 'get deleted', (s) => s.getBody(1, 4));
  await same(t, sides, 'get read', (s) => s.getBody(1, 3));
  await sync('after');
  await same(t, sides, 'sync after the cursor of the change', (s) => s.syncBody(1, { since: T0 + 3_600_000 + 100_000, perPage: 10 }));
  await walk(t, sides, { folder: 'INBOX', unread: false }, 3);
  for (const side of sides) await side.purge(2);
  await sync('after a mailbox purge');
  await same(t, sides, 'get of purged mail', (s) => s.getBody(1, 2));
  t.is(JSON.parse(await sides[1].service.listBody(1, { folder: 'INBOX', mailboxId: 2, perPage: 10 })).data.length, 0);
  t.is(JSON.parse(await sides[1].service.listBody(1, { folder: 'INBOX', q: 'report', perPage: 100 })).data.length, 26);
  const quota = await Promise.all(sides.map((s) => s.db.selectFrom('mailboxes').select('used_bytes').where('id', '=', 2).executeTakeFirstOrThrow()));
  t.is(Number(quota[1].used_bytes), Number(quota[0].used_bytes));
});

test('search answers the same whichever of its plans runs (a window walk, or every GIN hit)', async (t) => {
  const sides = await bothSides(t);
  // The service's reads take the GIN plan for this little mail; here every search walks first, and a
  // window of a few rows makes the walk fall short for all but the most common words, so both plans answer.
  const small = createPgEmailReads(sides[1].db, { window: 3, fewHits: 0 });
  const searches = ['alpha', 'rep', 'charlie delta', '"numbers are up"', 'acme', 'creme', 'foo-ba', 'zzz', 'report delta echo'];
  const compare = async (q: string, perPage: number, cursor: string | undefined, label: string): Promise<string> => {
    const want = await sides[0].service.listBody(1, { folder: 'INBOX', q, perPage, cursor });
    const c = cursor ? decodeListCursor(cursor) : null;
    const got = await runPgReadJob(small, { op: 'list', query: {
      filter: { tenantId: 1, folder: 'INBOX' }, match: encodePgSearch(pgSearch(q)!), perPage,
      pos: c ? { receivedAt: c.receivedAt, id: c.id, side: c.direction === 'next' ? 'below' : 'above' } : null,
    } });
    t.is(got, want, `${q} per ${perPage} ${label}`);
    return want;
  };
  let pages = 0;
  for (const q of searches) {
    for (const perPage of [1, 4, 100]) {
      // Forward to the last page, then back to the first.
      let meta = JSON.parse(await compare(q, perPage, undefined, 'first')).meta;
      for (let i = 0; meta.next_cursor && i < 80; i++, pages++) meta = JSON.parse(await compare(q, perPage, meta.next_cursor, `next ${i}`)).meta;
      for (let i = 0; meta.prev_cursor && i < 80; i++, pages++) meta = JSON.parse(await compare(q, perPage, meta.prev_cursor, `prev ${i}`)).meta;
    }
  }
  t.true(pages > 100);
});
