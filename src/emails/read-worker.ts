import { parentPort, workerData } from 'node:worker_threads';
import { openReader } from '../db/reader.js';
import { runReadJob } from './reading.js';
import { createEmailReads } from './store.js';
import type { ReadReply, ReadRequest, ReaderMessage, ReaderThreadOptions } from './read-pool.js';

/*
 * A reader thread: a read-only connection of its own, running list, sync and get reads for the
 * main thread and answering with the JSON text of the response bodies, a batch at a time
 * (read-pool.ts).
 */
const options = workerData as ReaderThreadOptions;
const reads = createEmailReads(openReader(options.file));
const port = parentPort!;

function run(request: ReadRequest): ReadReply {
  try {
    return { id: request.id, ok: true, body: runReadJob(reads, request.job) };
  } catch (err) {
    return { id: request.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

port.on('message', (text: string) => {
  port.postMessage((JSON.parse(text) as ReadRequest[]).map(run) satisfies ReaderMessage);
});
port.postMessage({ ready: true } satisfies ReaderMessage);
