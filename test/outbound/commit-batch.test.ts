import test from 'ava';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connection.js';
import { createCommitBatcher } from '../../src/outbound/commit-batch.js';
import { tempDir } from '../helpers/app.js';

async function setup(t: Parameters<typeof tempDir>[0]) {
  const database = await openDatabase(tempDir(t));
  t.teardown(() => database.close());
  const db = database.db;
  await sql`CREATE TABLE outcome (id INTEGER PRIMARY KEY, note TEXT NOT NULL)`.execute(db);
  const insert = (id: number, note: string | null) => (trx: typeof db) => sql`INSERT INTO outcome (id, note) VALUES (${id}, ${note})`.execute(trx).then(() => undefined);
  const stored = async () => (await sql<{ id: number }>`SELECT id FROM outcome ORDER BY id`.execute(db)).rows.map((r) => r.id);
  return { db, insert, stored };
}

test('work submitted in one turn commits together, and each caller learns when its own is committed', async (t) => {
  const { db, insert, stored } = await setup(t);
  const commit = createCommitBatcher(db);
  const transactions = new Set<unknown>();
  const seen = (work: (trx: typeof db) => Promise<void>) => (trx: typeof db) => { transactions.add(trx); return work(trx); };
  await Promise.all([1, 2, 3].map((id) => commit(seen(insert(id, 'sent')))));
  t.deepEqual(await stored(), [1, 2, 3]);
  t.is(transactions.size, 1);
  await commit(insert(4, 'sent'));
  t.deepEqual(await stored(), [1, 2, 3, 4]);
});

test('one failing piece of work rolls back none of the others: they are committed alone and only it is rejected', async (t) => {
  const { db, insert, stored } = await setup(t);
  const commit = createCommitBatcher(db);
  const results = await Promise.allSettled([commit(insert(1, 'sent')), commit(insert(2, null)), commit(insert(3, 'sent'))]);
  t.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  t.regex(String((results[1] as PromiseRejectedResult).reason), /NOT NULL/);
  t.deepEqual(await stored(), [1, 3]);
});
