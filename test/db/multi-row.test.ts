import test from 'ava';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connection.js';
import { jsonList } from '../../src/db/json-list.js';
import { multiRowInsert, statementChunks } from '../../src/db/multi-row.js';
import { createIngestStore } from '../../src/mailstore/inbound-store.js';
import { tempDir } from '../helpers/app.js';

test('any row count is sent as a sum of a few statement sizes', (t) => {
  t.deepEqual(statementChunks(0), []);
  t.deepEqual(statementChunks(1), [1]);
  t.deepEqual(statementChunks(3), [2, 1]);
  t.deepEqual(statementChunks(256), [128, 128]);
  t.deepEqual(statementChunks(200), [128, 32, 32, 8]);
  t.deepEqual(statementChunks(45), [32, 8, 2, 2, 1]);
  for (let n = 0; n <= 600; n++) {
    const chunks = statementChunks(n);
    t.is(chunks.reduce((a, b) => a + b, 0), n);
    t.true(chunks.every((c) => [128, 32, 8, 2, 1].includes(c)));
  }
  // A limit that admits at most 5 rows per statement: one row at a time still goes through.
  t.deepEqual(statementChunks(12, (_start, rows) => rows <= 5), [2, 2, 2, 2, 2, 2]);
  t.deepEqual(statementChunks(3, () => false), [1, 1, 1]);
});

test('multi-row inserts under a byte limit store every row; JSON lists select by id', async (t) => {
  const dir = tempDir(t);
  const database = await openDatabase(dir);
  t.teardown(() => database.close());
  const db = database.db;
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, blob BLOB)`.execute(db);
  const sizes: number[] = [];
  const insert = multiRowInsert<{ id: number; name: string; blob: Buffer }>('INSERT INTO t', ['id', 'name', 'blob'], '', {
    maxBytes: 10_000, bytesOf: (r) => { sizes.push(r.blob.length); return r.blob.length; },
  });
  const rows = Array.from({ length: 301 }, (_, i) => ({ id: i + 1, name: `n${i}`, blob: Buffer.alloc(i % 7 === 0 ? 4_000 : 100, i) }));
  await insert.run(db, rows);
  const stored = await db.selectFrom('t' as never).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow() as { n: number };
  t.is(stored.n, 301);
  t.true(sizes.length > 0);
  const back = await sql<{ id: number; name: string; blob: Buffer }>`SELECT id, name, blob FROM t WHERE id IN ${jsonList([1, 7, 300, 999])} ORDER BY id`.execute(db);
  t.deepEqual(back.rows.map((r) => [r.id, r.name, r.blob.length, r.blob[0]]), [[1, 'n0', 4_000, 0], [7, 'n6', 100, 6], [300, 'n299', 100, 299 & 0xff]]);
  t.deepEqual((await sql`SELECT id FROM t WHERE id IN ${jsonList([])}`.execute(db)).rows, []);
});

test('queue rows and their message keys go through the JSON-list queries', async (t) => {
  const dir = tempDir(t);
  const database = await openDatabase(dir);
  t.teardown(() => database.close());
  const store = createIngestStore();
  const db = database.db;
  const row = (n: number) => ({ kind: 'smtp' as const, message: `{"n":${n}}`, targets: '[]', raw: Buffer.alloc(300_000 + n, n), raw_path: null, size: 300_000 + n, error: null, created_at: n, done_at: null });
  const ids = await db.transaction().execute((trx) => store.insertInbound(trx, Array.from({ length: 9 }, (_, i) => row(i))));
  t.deepEqual(ids, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const loaded = await store.load(db, [9, 2, 5]);
  t.deepEqual(loaded.map((r) => [r.id, r.message, r.raw!.length, r.raw![0]]), [[2, '{"n":1}', 300_001, 1], [5, '{"n":4}', 300_004, 4], [9, '{"n":8}', 300_008, 8]]);
  await store.finish(db, [{ id: 2, keep: true }, { id: 5, keep: false }]);
  const left = await db.selectFrom('inbound').select(['id', 'status']).where('id', 'in', [2, 5]).execute();
  t.deepEqual(left, [{ id: 2, status: 'stored' }]);
  await store.reserve(db, [{ mailbox_id: 1, message_id: '<a@x>', inbound_id: 3 }]);
  const taken = await store.takenKeys(db, [{ mailboxId: 1, messageId: '<a@x>' }, { mailboxId: 2, messageId: '<a@x>' }, { mailboxId: 1, messageId: "<o'brien@x>" }]);
  t.deepEqual([...taken], ['1\u0000<a@x>']);
  t.deepEqual([...(await store.takenKeys(db, []))], []);
});
