import test, { type ExecutionContext } from 'ava';
import { CompiledQuery, sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder } from 'kysely';
import { manualClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/connection.js';
import type { Database } from '../../src/db/schema.js';
import { ftsMatch } from '../../src/emails/fts.js';
import { iso } from '../../src/emails/reading.js';
import { plainPrefix } from '../../src/emails/search.js';
import { createMarkers } from '../../src/mailstore/markers.js';
import { createEmailStore, LIST_COLUMNS, readQueries, type ListFilter, type Position, type RawQuery } from '../../src/emails/store.js';
import type { EmailsTable } from '../../src/db/tables/emails.js';
import { createEmailWriter } from '../../src/mailstore/writer.js';
import { KEY_BY_HASH_SQL } from '../../src/tenants/store.js';
import { tempDir } from '../helpers/app.js';
import { copies, seed, T0 } from './mail-fixture.js';

/*
 * The hot reads run as plain SQL on prepared statements (store.ts `readQueries`). They replaced
 * Kysely queries; these are those queries, kept here as the reference: for every shape of filter,
 * position and option, the plain SQL must give the very answer the Kysely query gives, on a
 * database holding mail that every shape finds some of (rows, columns and order compared).
 */

/** A SQLite database with the read tests' mail (mail-fixture.ts), written as the storage thread writes it, and an API key. */
async function seeded(t: ExecutionContext): Promise<Kysely<Database>> {
  const opened = await openDatabase(tempDir(t));
  t.teardown(() => opened.close());
  const { db } = opened;
  const clock = manualClock(T0 + 3_600_000);
  const store = createEmailStore();
  const markers = createMarkers(clock, (x) => store.maxMarker(x));
  await seed(db, clock.now());
  const writer = createEmailWriter({ store, markers, clock });
  const all = copies();
  for (let i = 0; i < all.length; i += 16) {
    await db.transaction().execute(async (trx) => {
      await writer.storeCopies(trx, all.slice(i, i + 16));
      await markers.flush(trx);
    });
    clock.advance(1000);
  }
  await db.insertInto('api_keys').values({ tenant_id: 1, key_hash: 'ab', perms: 'read', revoked_at: null, created_at: clock.now() }).execute();
  return db as unknown as Kysely<Database>;
}

type E = ExpressionBuilder<Database & { e: EmailsTable }, 'e'>;
const notIndexed = (column: 'e.tenant_id') => sql<number>`+${sql.ref(column)}`;

function listWhere(eb: E, f: ListFilter, pos: Position | null) {
  const and = [eb('e.tenant_id', '=', f.tenantId), eb('e.deleted_at', 'is', null)];
  if (f.mailboxId !== undefined) and.push(eb('e.mailbox_id', '=', f.mailboxId));
  if (f.folder !== undefined) and.push(eb('e.folder', '=', f.folder));
  if (f.unread === true) and.push(eb('e.read_at', 'is', null));
  if (f.unread === false) and.push(eb('e.read_at', 'is not', null));
  if (f.since !== undefined) and.push(eb('e.received_at', '>=', f.since));
  if (f.before !== undefined) and.push(eb('e.received_at', '<=', f.before));
  if (pos) {
    const [cmp, strict] = pos.side === 'below' ? (['<=', '<'] as const) : (['>=', '>'] as const);
    and.push(eb('e.received_at', cmp, pos.receivedAt));
    and.push(eb.or([eb('e.received_at', strict, pos.receivedAt), eb('e.id', strict, pos.id)]));
  }
  return eb.and(and);
}

function ordered<O>(q: SelectQueryBuilder<any, any, O>, side: 'below' | 'above') {
  const dir = side === 'below' ? 'desc' : 'asc';
  return q.orderBy('e.received_at', dir).orderBy('e.id', dir);
}

const referenceOn = (db: Kysely<Database>) => ({
  listPage: (f: ListFilter, pos: Position | null, limit: number) =>
    ordered(db.selectFrom('emails as e').select(LIST_COLUMNS).where((eb) => listWhere(eb, f, pos)), pos?.side ?? 'below').limit(limit),
  anyBeyond: (f: ListFilter, pos: Position) =>
    db.selectFrom('emails as e').select('e.id').where((eb) => listWhere(eb, f, pos)).limit(1),
  searchChunk: (match: string, f: ListFilter, pos: Position | null, belowId: number, limit: number) =>
    db.selectFrom('emails_fts').crossJoin('emails as e').whereRef('e.id', '=', 'emails_fts.rowid')
      .select(['e.id', 'e.received_at', 'e.received_max'])
      .where(sql<boolean>`emails_fts MATCH ${match}`)
      .where('emails_fts.rowid', '<', belowId)
      .where((eb) => listWhere(eb, f, pos))
      .orderBy('emails_fts.rowid', 'desc').limit(limit),
  searchOrdered: (match: string, f: ListFilter, pos: Position | null, limit: number) =>
    ordered(db.selectFrom('emails as e').select(['e.id', 'e.received_at'])
      .where('e.id', 'in', (eb) => eb.selectFrom('emails_fts').select('emails_fts.rowid').where(sql<boolean>`emails_fts MATCH ${match}`))
      .where((eb) => listWhere(eb, f, pos)), pos?.side ?? 'below').limit(limit),
  searchAnyBeyond: (match: string, f: ListFilter, pos: Position) =>
    db.selectFrom('emails_fts').crossJoin('emails as e').whereRef('e.id', '=', 'emails_fts.rowid').select('e.id')
      .where(sql<boolean>`emails_fts MATCH ${match}`).where((eb) => listWhere(eb, f, pos))
      .orderBy('emails_fts.rowid', pos.side === 'above' ? 'desc' : 'asc').limit(1),
  listRows: (tenantId: number, ids: number[]) =>
    db.selectFrom('emails as e').select(LIST_COLUMNS).where('e.id', 'in', ids).where(notIndexed('e.tenant_id'), '=', tenantId),
  get: (tenantId: number, id: number) =>
    db.selectFrom('emails as e').innerJoin('email_contents as c', 'c.email_id', 'e.id')
      .select([...LIST_COLUMNS, 'e.message_id', 'e.updated_seq', 'c.cc', 'c.bcc', 'c.headers', 'c.auth', 'c.body_text', 'c.body_html', 'c.inbound_id', 'e.flags'])
      // The spam verdict (src/spam), from its own table.
      .select(sql<string | null>`(select "verdict" from "email_spam" where "email_id" = "e"."id")`.as('spam'))
      .where('e.id', '=', id).where('e.tenant_id', '=', tenantId).where('e.deleted_at', 'is', null),
  attachmentsOf: (emailId: number) =>
    db.selectFrom('attachments').select(['id', 'filename', 'content_type', 'size', 'content_id', 'disposition', 'sha256'])
      .where('email_id', '=', emailId).orderBy('id'),
  syncPage: (tenantId: number, from: { atLeast: number } | { above: number }, limit: number, mailboxId?: number) => {
    let q = db.selectFrom('emails as e').select([...LIST_COLUMNS, 'e.deleted_at', 'e.updated_seq']).where('e.tenant_id', '=', tenantId);
    q = 'above' in from ? q.where('e.updated_seq', '>', from.above) : q.where('e.updated_seq', '>=', from.atLeast);
    if (mailboxId !== undefined) q = q.where('e.mailbox_id', '=', mailboxId);
    return q.orderBy('e.updated_seq').limit(limit);
  },
  keyByHash: (keyHash: string) =>
    db.selectFrom('api_keys').innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
      .select(['api_keys.id', 'api_keys.tenant_id', 'api_keys.key_hash', 'api_keys.perms', 'api_keys.revoked_at', 'tenants.plan_active', 'tenants.is_admin'])
      .where('api_keys.key_hash', '=', keyHash),
});

/** Runs the plain SQL and the Kysely query on `db` and compares their rows; returns how many there were. */
async function same(t: ExecutionContext, db: Kysely<Database>, raw: RawQuery, q: { execute(): Promise<unknown[]> }, label: string): Promise<number> {
  const plain = (await db.executeQuery(CompiledQuery.raw(raw.sql, raw.parameters))).rows;
  const kysely = await q.execute();
  t.deepEqual(plain, kysely, label);
  return plain.length;
}

/** Every combination of the optional filters, over values the seeded mail has on both sides of. */
function* filters(): Generator<ListFilter> {
  for (const mailboxId of [undefined, 2]) {
    for (const unread of [undefined, true, false]) {
      for (const since of [undefined, T0 + 10 * 60_000]) {
        for (const before of [undefined, T0 + 40 * 60_000]) for (const folder of [undefined, 'INBOX']) yield { tenantId: 1, mailboxId, unread, since, before, folder };
      }
    }
  }
}
const positions: Array<Position | null> = [null, { receivedAt: T0 + 25 * 60_000, id: 30, side: 'below' }, { receivedAt: T0 + 25 * 60_000, id: 30, side: 'above' }];

test('the plain SQL of list pages and search answers as the Kysely queries did, for every shape', async (t) => {
  const db = await seeded(t);
  // Half the mail is marked read, so both `unread` filters find some.
  await db.updateTable('emails').set({ read_at: T0 }).where(sql<boolean>`id % 2 = 0`).execute();
  const reference = referenceOn(db);
  const match = '"delt"*';
  let rows = 0;
  for (const f of filters()) {
    for (const pos of positions) {
      const label = JSON.stringify({ f, pos });
      rows += await same(t, db, readQueries.listPage(f, pos, 26), reference.listPage(f, pos, 26), `listPage ${label}`);
      rows += await same(t, db, readQueries.searchChunk(match, f, pos, 999, 64), reference.searchChunk(match, f, pos, 999, 64), `searchChunk ${label}`);
      rows += await same(t, db, readQueries.searchOrdered(match, f, pos, 26), reference.searchOrdered(match, f, pos, 26), `searchOrdered ${label}`);
      if (pos) {
        rows += await same(t, db, readQueries.anyBeyond(f, pos), reference.anyBeyond(f, pos), `anyBeyond ${label}`);
        rows += await same(t, db, readQueries.searchAnyBeyond(match, f, pos), reference.searchAnyBeyond(match, f, pos), `searchAnyBeyond ${label}`);
      }
    }
  }
  // Not a comparison of empty answers: the unfiltered first page is full, and the shapes found plenty.
  t.is(await same(t, db, readQueries.listPage({ tenantId: 1 }, null, 26), reference.listPage({ tenantId: 1 }, null, 26), 'first page'), 26);
  t.true(rows > 1000, `${rows} rows compared`);
});

test('the plain SQL of rows by id, get, attachments, sync and key lookup answers as Kysely did', async (t) => {
  const db = await seeded(t);
  const reference = referenceOn(db);
  for (const ids of [[5], [5, 9, 2], Array.from({ length: 101 }, (_, i) => i + 1)]) {
    t.true(await same(t, db, readQueries.listRows(1, ids), reference.listRows(1, ids), `listRows ${ids.length}`) > 0);
  }
  t.is(await same(t, db, readQueries.get(1, 17), reference.get(1, 17), 'get'), 1);
  t.is(await same(t, db, readQueries.get(2, 17), reference.get(2, 17), 'get of another tenant'), 0);
  t.is(await same(t, db, readQueries.attachmentsOf(17), reference.attachmentsOf(17), 'attachmentsOf'), 1);
  const [middle] = await db.selectFrom('emails').select('updated_seq').where('tenant_id', '=', 1).orderBy('updated_seq').offset(20).limit(1).execute();
  for (const from of [{ atLeast: 0 }, { atLeast: middle!.updated_seq }, { above: middle!.updated_seq }]) {
    for (const mailboxId of [undefined, 2]) {
      t.true(await same(t, db, readQueries.syncPage(1, from, 26, mailboxId), reference.syncPage(1, from, 26, mailboxId), `syncPage ${JSON.stringify({ from, mailboxId })}`) > 0);
    }
  }
  for (const hash of ['ab', 'cd']) {
    const plain = (await db.executeQuery(CompiledQuery.raw(KEY_BY_HASH_SQL, [hash]))).rows;
    t.deepEqual(plain, await reference.keyByHash(hash).execute(), `key ${hash}`);
    t.is(plain.length, hash === 'ab' ? 1 : 0);
  }
});

test('iso formats exactly as Date#toISOString, cached days or not', (t) => {
  const day = 86_400_000;
  const samples = [0, -1, 1, day - 1, day, -day, -day - 1, 1_732_233_599_999, 1_732_233_600_000, 253_402_300_799_999, 253_402_300_800_000,
    -62_167_219_200_000, -62_167_219_200_001, 8.64e15, -8.64e15, 1.5, 1_700_000_000_000.25, -0];
  let seed = 7;
  const rand = () => { seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31; return seed / 2 ** 31; };
  for (let i = 0; i < 20_000; i++) samples.push(Math.round((rand() - 0.3) * 4e12), 1_732_000_000_000 + Math.round(rand() * 3 * day));
  for (const ms of [...samples, ...samples]) t.is(iso(ms), new Date(ms).toISOString(), String(ms));
  t.throws(() => iso(NaN), { instanceOf: RangeError });
  t.throws(() => iso(8.64e15 + 1), { instanceOf: RangeError });
});

test('plainPrefix finds a last-word prefix of one plain token, and only that', (t) => {
  const p = (q: string) => plainPrefix(ftsMatch(q)!);
  t.deepEqual(p('zephyrine'), { token: 'zephyrine', exact: '"zephyrine"' });
  t.deepEqual(p('Quarterly REPORT'), { token: 'report', exact: '"Quarterly" AND "REPORT"' });
  t.deepEqual(p('"numbers are" up2'), { token: 'up2', exact: '"numbers are" AND "up2"' });
  for (const q of ['"numbers are"', 'food.example', 'cfo@acme.example', 'crème', 'x-y', 'report "quart', 'AND "x']) t.is(p(q), null, q);
});
