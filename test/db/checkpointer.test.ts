import test from 'ava';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { BACKGROUND_RESTART_PAGES, databaseFile, openConnection, openDatabase } from '../../src/db/connection.js';
import { startCheckpointer } from '../../src/db/checkpointer.js';
import { tempDir } from '../helpers/app.js';

const size = (file: string) => statSync(file).size;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The WAL header's salts (bytes 16-23): SQLite draws new ones each time the WAL starts over. */
function walSalt(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(8);
    readSync(fd, header, 0, 8, 16);
    return header.toString('hex');
  } finally {
    closeSync(fd);
  }
}

test('the checkpoint thread copies commits into the database file; the WAL stays short under a steady writer', async (t) => {
  const dir = tempDir(t);
  await (await openDatabase(dir)).close();
  const { sqlite } = openConnection(dir, { checkpoints: 'background' });
  t.teardown(() => sqlite.close());
  t.is(sqlite.pragma('wal_autocheckpoint', { simple: true }), BACKGROUND_RESTART_PAGES);
  sqlite.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB)');
  const insert = sqlite.prepare('INSERT INTO filler (body) VALUES (?)');
  const batch = sqlite.transaction(() => { for (let i = 0; i < 10; i++) insert.run(Buffer.alloc(8192, i)); });
  const file = databaseFile(dir);
  const before = size(file);

  // ~1,000 pages: far short of the writer's own checkpoint, so they stay in the WAL...
  for (let i = 0; i < 30; i++) batch();
  t.is(size(file), before, 'no commit copied anything into the database file');

  // ...until the checkpoint thread copies them, with no commit to trigger it.
  const checkpointer = startCheckpointer(file, { activeMs: 5, idleMs: 5, restartFrames: 256 });
  t.teardown(() => checkpointer.close());
  for (let i = 0; i < 200 && size(file) < before + 300 * 8192; i++) await sleep(25);
  t.true(size(file) >= before + 300 * 8192, 'the thread copied the commits');

  // A writer that keeps committing, as the storage thread does: the thread starts the WAL over again and again.
  let rows = 300;
  const salts = new Set([walSalt(`${file}-wal`)]);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && rows < 3000) {
    batch();
    rows += 10;
    salts.add(walSalt(`${file}-wal`));
    await sleep(1);
  }
  const walBytes = size(`${file}-wal`);
  const writtenBytes = (rows - 300) * 8192;
  // How often and how soon the thread gets a turn depends on the host's load, so the test asks
  // for restarts and a WAL well short of all that was written, not for a fixed size: without
  // restarts the WAL would hold every row since the first copy (the writer's own checkpoint allows 64 MB).
  t.true(salts.size >= 3, `the WAL started over ${salts.size - 1} times while ${rows - 300} rows were written`);
  t.true(walBytes < writtenBytes / 2, `the WAL stays short (${walBytes} bytes after ${writtenBytes} bytes of rows)`);
  t.is(sqlite.prepare('SELECT count(*) FROM filler').pluck().get(), rows);
});

test('the server database runs background checkpoints and closes with them', async (t) => {
  const database = await openDatabase(tempDir(t), { checkpoints: 'background' });
  t.is(database.sqlite.pragma('wal_autocheckpoint', { simple: true }), BACKGROUND_RESTART_PAGES);
  await database.close();
  t.false(database.sqlite.open);
});
