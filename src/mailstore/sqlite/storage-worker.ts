/**
 * The storage thread: the second SQLite connection, where the write transactions of ingestion run
 * (group commits of accepted mail, batch storage with FTS5 indexing), so the thread that speaks
 * HTTP and SMTP only accepts. Requests are handled one at a time, in arrival order.
 */
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { databaseFile, openConnection } from '../../db/connection.js';
import { walSyncer } from '../../db/durability.js';
import { createMarkers } from '../markers.js';
import { createEmailWrites } from '../email-writes.js';
import { createEmailWriter } from '../writer.js';
import { lowerThreadPriority } from '../../threads/priority.js';
import { createEventRecorder, type QueuedHint } from '../../webhooks/events.js';
import { acceptGroup } from '../commits.js';
import { defaultSteps, deliverBatch } from '../pipeline.js';
import { spamClassifyStep } from '../../spam/filing.js';
import { moveRecords } from '../journal-move.js';
import { noteFailure } from '../set-aside.js';
import type { StorageReply, StorageRequest, StorageThreadData } from './storage-protocol.js';
import { createIngestStore } from '../inbound-store.js';
import { createOutboundStore } from '../outbound-store.js';
import { commitSubmissions } from '../submissions.js';

// Storing queued mail is background work: the thread that answers SMTP and HTTP comes first.
lowerThreadPriority();

const { dataDir, markerCell, spamFilter } = workerData as StorageThreadData;
// The pipeline's classify step is the spam filter in the configured mode (src/spam/filing.ts).
const steps = { ...defaultSteps, classify: spamClassifyStep(spamFilter ?? 'builtin') };
// Only ever opened by the server, whose checkpoint thread copies the WAL into the database.
const { db } = openConnection(dataDir, { cacheMb: 8, checkpoints: 'background' });
const wal = walSyncer(`${databaseFile(dataDir)}-wal`);
let now = Date.now();
const clock = { now: () => now };
const store = createIngestStore();
const emailStore = createEmailWrites();
const markers = createMarkers(clock, (x) => emailStore.maxMarker(x), { cell: markerCell, loaded: true });
const writer = createEmailWriter({ store: emailStore, markers, clock });
const outbound = createOutboundStore();
let hints: QueuedHint[] = [];
const events = createEventRecorder({ clock, onQueued: (h) => { hints.push(...h); } });
const port = parentPort!;
/** A raw file by the name its row keeps (blobs.ts rawFile): a copy with bytes of its own of mail kept in a file. */
const readRawFile = (name: string) => readFile(join(dataDir, 'raw', basename(name)));

async function handle(req: StorageRequest): Promise<StorageReply> {
  now = req.now;
  hints = [];
  switch (req.op) {
    case 'accept': {
      const outcomes = await db.transaction().execute((trx) => acceptGroup(trx, store, req.jobs, req.now));
      wal.sync();
      return { id: req.id, ok: true, outcomes, hints: [] };
    }
    case 'move': {
      const moved = await db.transaction().execute((trx) => moveRecords(trx, store, req.input));
      // Durable before the journal lets go of the records (synchronous=NORMAL leaves the WAL unsynced).
      wal.sync();
      return { id: req.id, ok: true, moved, hints: [] };
    }
    case 'submissions': {
      const refs = await db.transaction().execute((trx) => commitSubmissions(trx, outbound, req.jobs, req.now));
      wal.sync();
      return { id: req.id, ok: true, refs, hints: [] };
    }
    case 'store': {
      const stored = await db.transaction().execute((trx) => deliverBatch(trx, { store, writer, events, steps, readRawFile }, req.input, req.now));
      // The recorder reports webhook hints on the next turn, after its transaction.
      await new Promise((r) => setImmediate(r));
      return { id: req.id, ok: true, stored, hints };
    }
    case 'note': {
      const noted = await db.transaction().execute((trx) => noteFailure(trx, store, req.inboundId, req.reason, req.now));
      return { id: req.id, ok: true, noted, hints: [] };
    }
    case 'close':
      await db.destroy();
      wal.close();
      return { id: req.id, ok: true, hints: [] };
  }
}

let chain = Promise.resolve();
port.on('message', (req: StorageRequest) => {
  chain = chain.then(async () => {
    let reply: StorageReply;
    try {
      reply = await handle(req);
    } catch (err) {
      reply = { id: req.id, ok: false, error: (err as Error)?.message ?? String(err) };
    }
    port.postMessage(reply);
    if (req.op === 'close') port.close();
  });
});
