import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { openDatabase } from '../../src/db/connection.js';
import type { JournalEntry } from '../../src/inbound/journal-format.js';
import { moveRecords } from '../../src/mailstore/journal-move.js';
import { createJournal } from '../../src/ingest/journal.js';
import { createIngestStore } from '../../src/mailstore/inbound-store.js';
import { createLogger } from '../../src/logger.js';
import { tempDir } from '../helpers/app.js';

const entry = (n: number, rawPath: string | null = null): JournalEntry => ({
  envelopeJson: JSON.stringify({ mailFrom: `s${n}@example.org` }), targetsJson: `[{"n":${n}}]`, size: 50 + n, rawPath, acceptedAt: 1_000 + n,
});

test('a move queues one row per record with the journal position, and passes over a record damaged on disk', async (t) => {
  const dir = tempDir(t);
  const database = await openDatabase(dir);
  t.teardown(() => database.close());
  const journal = createJournal({ dir: join(dir, 'journal'), logger: createLogger('silent') });
  await journal.open(null);
  await journal.append(entry(1), [Buffer.from('Subject: one\r\n\r\n'), Buffer.from('first\r\n')]);
  await journal.append(entry(2), [Buffer.from('Subject: two\r\n\r\nsecond\r\n')]);
  await journal.append(entry(3, '/data/raw/big.eml'), null);
  const { refs, end } = journal.take(10, 1 << 20)!;
  // The second record's last byte flips on disk after it was acknowledged.
  const file = journal.pathOf(refs[1].segment);
  const bytes = readFileSync(file);
  bytes[refs[1].offset + refs[1].length - 1] ^= 0xff;
  writeFileSync(file, bytes);
  const store = createIngestStore();
  const result = await database.db.transaction().execute((trx) => moveRecords(trx, store, { paths: { [refs[0].segment]: file }, refs, end }));
  t.deepEqual(result, { moved: 2, damaged: [{ segment: refs[1].segment, offset: refs[1].offset }] });
  const rows = await database.db.selectFrom('inbound').selectAll().orderBy('id').execute();
  t.deepEqual(rows.map((r) => [r.kind, r.status, r.message, r.targets, r.raw?.toString() ?? null, r.raw_path, r.size, r.created_at]), [
    ['smtp', 'queued', entry(1).envelopeJson, entry(1).targetsJson, 'Subject: one\r\n\r\nfirst\r\n', null, 51, 1001],
    ['smtp', 'queued', entry(3).envelopeJson, entry(3).targetsJson, null, '/data/raw/big.eml', 53, 1003],
  ]);
  t.deepEqual(await store.journalPosition(database.db), end);
  await journal.close();
});
