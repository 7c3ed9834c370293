import { parentPort, workerData } from 'node:worker_threads';
import { openPool } from '../../db/postgres.js';
import { createPgPoolReads } from './reads.js';
import { runPgReadJob } from './read-job.js';
import type { PgReaderThreadOptions, ReadReply, ReadRequest, ReaderMessage } from '../read-pool.js';

/*
 * A PostgreSQL reader thread: a small pool of connections of its own, running list, sync and get
 * reads for the main thread and answering with the JSON text of the response bodies (read-pool.ts),
 * so that the driver's work (writing statements, parsing rows) and the JSON building leave the
 * event loop that answers HTTP, as SQLite's reader threads do (read-worker.ts). Reads are
 * asynchronous here: the answers that settle in one turn of this thread's loop go back together.
 */
const options = workerData as PgReaderThreadOptions;
// An idle connection's error (a restarted server) is the pool's to replace; the next read reconnects.
const pool = openPool(options.url, { max: options.connections, onIdleError: () => undefined });
const reads = createPgPoolReads(pool);
const port = parentPort!;

let replies: ReadReply[] = [];
let flushing: NodeJS.Immediate | null = null;

function reply(r: ReadReply): void {
  replies.push(r);
  flushing ??= setImmediate(() => {
    flushing = null;
    const out = replies;
    replies = [];
    port.postMessage(out satisfies ReaderMessage);
  });
}

function run(request: ReadRequest): void {
  runPgReadJob(reads, request.job).then(
    (body) => reply({ id: request.id, ok: true, body }),
    (err: unknown) => reply({ id: request.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
}

port.on('message', (text: string) => {
  for (const request of JSON.parse(text) as ReadRequest[]) run(request);
});
port.postMessage({ ready: true } satisfies ReaderMessage);
