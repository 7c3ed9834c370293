/**
 * The checkpoint thread: copies committed WAL frames into the database file with its own
 * connection, so the writers' commits do not. SQLite's automatic checkpoint runs inside the commit
 * that finds the WAL long and copies every frame not yet copied, fsyncing the database: with 1,000
 * pages that was ~17 ms every ~50 group commits of the storage thread, and every SMTP 250 of those
 * groups waited for it.
 *
 * A PASSIVE checkpoint waits for no one, but the WAL only starts over when a writer finds every
 * frame copied, which never happens while another writer keeps appending: the file grew by the
 * whole burst (450 MB in a 20 s SMTP benchmark). So once the WAL is long, a RESTART follows the
 * PASSIVE one: it holds writers back only while it copies the few frames written since, and the
 * next writer starts the WAL over. Should RESTART keep finding the database busy, the writers' own
 * checkpoint at BACKGROUND_RESTART_PAGES (connection.ts) does it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import type { CheckpointThreadData } from './checkpointer.js';

const { file, activeMs, idleMs, restartFrames } = workerData as CheckpointThreadData;
const sqlite = new BetterSqlite3(file);
// How long a RESTART waits for the writer and readers (new writers wait meanwhile).
sqlite.pragma('busy_timeout = 20');
sqlite.pragma('synchronous = NORMAL');
sqlite.pragma('wal_autocheckpoint = 0');
const passive = sqlite.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = sqlite.prepare('PRAGMA wal_checkpoint(RESTART)');
type Result = { busy: number; log: number; checkpointed: number };
let timer: NodeJS.Timeout | null = null;
let copiedUpTo = -1;

/** One PASSIVE checkpoint, a RESTART after it when the WAL is long; sooner again while frames keep coming. */
function run(): void {
  let active = false;
  try {
    const r = passive.get() as Result;
    active = r.checkpointed > 0 && r.checkpointed !== copiedUpTo;
    copiedUpTo = r.checkpointed;
    if (r.log >= restartFrames) restart.get();
  } catch (err) {
    // Tried again at the next turn; nothing is lost meanwhile (the WAL keeps it).
    parentPort!.postMessage({ error: (err as Error).message });
  }
  timer = setTimeout(run, active ? activeMs : idleMs);
}

run();
parentPort!.on('message', (msg: 'close') => {
  if (msg !== 'close') return;
  if (timer) clearTimeout(timer);
  sqlite.close();
  parentPort!.close();
});
