import { Worker } from 'node:worker_threads';
import type { Clock } from '../../clock.js';
import type { MarkerCell } from '../markers.js';
import type { Logger } from '../../logger.js';
import { threadEntry } from '../../threads/entry.js';
import { ownHeapLimits } from '../../threads/heap-limits.js';
import { INGEST_THREAD_OLD_MB } from '../../threads/heap-growth.js';
import type { QueuedHint } from '../../webhooks/events.js';
import type { AcceptJob, AcceptOutcome, StoreInput, StoreResult } from '../commits.js';
import type { MoveInput, MoveResult } from '../journal-move.js';
import type { QueueJob } from '../submissions.js';
import type { FailureNote } from '../set-aside.js';
import type { SpamFilterMode } from '../../spam/settings.js';
import type { StorageReply, StorageRequest, StorageThreadData } from './storage-protocol.js';

/**
 * Heap limits of the storage thread: a batch holds at most BATCH_BYTES of messages plus their
 * index text, and the old-space limit is sized for V8's growing factor (heap-growth.ts); a small
 * young generation keeps its resident memory down: 4 MB semi-spaces (heap-limits.ts). 2 MB ones,
 * 4 MB less again, cost ~5 % more CPU per message than 8 MB ones (docs/PERFORMANCE.md, "Allocator,
 * GC and thread settings" and "Tried and not kept").
 */
const STORAGE_HEAP = { maxOldGenerationSizeMb: INGEST_THREAD_OLD_MB, maxYoungGenerationSizeMb: 12 };

type Pending = { resolve(r: StorageReply & { ok: true }): void; reject(e: Error): void };
type Body = StorageRequest extends infer R ? R extends StorageRequest ? Omit<R, 'id' | 'now'> : never : never;

/**
 * The server's side of the storage thread (storage-worker.ts): sends it group commits and storage
 * batches and resolves with their results. The thread is started on first use and again after it
 * failed; a request whose thread died is rejected (the accept fails with 451/500, the batch stays
 * queued), never silently lost.
 */
export function createStorageThread(deps: {
  dataDir: string; markerCell: MarkerCell; spamFilter?: SpamFilterMode; clock: Clock; logger: Logger; onHints(h: QueuedHint[]): void;
  /** Runs (once, successfully) before the thread is first started. */
  beforeStart(): Promise<void>;
}) {
  const entry = threadEntry(import.meta.url, 'storage-worker');
  const pending = new Map<number, Pending>();
  let worker: Worker | null = null;
  let seq = 0;

  function failAll(err: Error): void {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  }

  function spawn(): Worker {
    const workerData: StorageThreadData = { dataDir: deps.dataDir, markerCell: deps.markerCell, spamFilter: deps.spamFilter };
    const w = new Worker(entry.script, { eval: entry.evaluated, workerData, resourceLimits: ownHeapLimits(STORAGE_HEAP) });
    w.on('message', (reply: StorageReply) => {
      const p = pending.get(reply.id);
      if (!p) return;
      pending.delete(reply.id);
      if (!reply.ok) return p.reject(new Error(reply.error));
      if (reply.hints.length) deps.onHints(reply.hints);
      p.resolve(reply);
    });
    w.on('error', (err) => {
      deps.logger.error({ err }, 'storage thread failed');
      if (worker === w) worker = null;
      failAll(err);
    });
    w.on('exit', (code) => {
      if (worker === w) worker = null;
      failAll(new Error(`storage thread exited with code ${code}`));
    });
    return w;
  }

  let prepared: Promise<void> | null = null;

  async function request(body: Body): Promise<StorageReply & { ok: true }> {
    if (!worker) {
      prepared ??= deps.beforeStart().catch((err) => { prepared = null; throw err; });
      await prepared;
      worker ??= spawn();
    }
    const id = ++seq;
    const w = worker;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      w.postMessage({ ...body, id, now: deps.clock.now() } as StorageRequest);
    });
  }

  return {
    /** Commits a group of accepted messages in one transaction, durable (WAL fsynced) when it resolves; one outcome per job. */
    async accept(jobs: AcceptJob[]): Promise<AcceptOutcome[]> {
      return (await request({ op: 'accept', jobs })).outcomes!;
    },
    /** Commits a group of submissions' queue items and daily counts in one durable transaction; the queued bytes' reference of each. */
    async submissions(jobs: QueueJob[]): Promise<Array<number | null>> {
      return (await request({ op: 'submissions', jobs })).refs!;
    },
    /** Turns acceptance-journal records into queue rows in one durable transaction. */
    async move(input: MoveInput): Promise<MoveResult> {
      return (await request({ op: 'move', input })).moved!;
    },
    /** Stores one batch of queued messages in one transaction. */
    async store(input: StoreInput): Promise<StoreResult> {
      return (await request({ op: 'store', input })).stored!;
    },
    /** Counts a failed try at one queued message; its last allowed try sets it aside (set-aside.ts). */
    async note(inboundId: number, reason: string): Promise<FailureNote> {
      return (await request({ op: 'note', inboundId, reason })).noted!;
    },
    /** Lets requests under way finish, closes the thread's connection and ends it. */
    async close(): Promise<void> {
      const w = worker;
      if (!w) return;
      const exited = new Promise<void>((r) => w.once('exit', () => r()));
      await request({ op: 'close' }).catch(() => undefined);
      worker = null;
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())]);
      await w.terminate();
    },
  };
}
export type StorageThread = ReturnType<typeof createStorageThread>;
