import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../threads/entry.js';
import { ownHeapLimits } from '../threads/heap-limits.js';
import { idleTimer } from '../threads/idle.js';
import type { ReadJob } from './reading.js';

/** What a reader thread is started with. */
export interface ReaderThreadOptions {
  /** The database file, opened read-only. */
  file: string;
}

/** What a PostgreSQL reader thread is started with (postgres/read-worker.ts). */
export interface PgReaderThreadOptions {
  /** MAILSTEAD_DATABASE_URL. */
  url: string;
  /** Connections of the thread's own pool. */
  connections: number;
}

/** One job for a reader thread. */
export interface ReadRequest {
  id: number;
  job: ReadJob;
}

/** A job's answer. */
export type ReadReply =
  | { id: number; ok: true; body: string | null }
  | { id: number; ok: false; error: string };

/**
 * Main thread to reader thread: the JSON text of a batch of ReadRequests (a string crosses threads
 * for about half the CPU of an object). Reader thread to main thread: `{ ready: true }` once, then
 * one ReadReply[] per batch.
 */
export type ReaderMessage = { ready: true } | ReadReply[];

interface Pending {
  job: ReadJob;
  resolve(body: string | null | PromiseLike<string | null>): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** Jobs sent or about to be, by id. */
  pending: Map<number, Pending>;
  /** Jobs not sent yet (the next batch). */
  outbox: ReadRequest[];
}

/**
 * Reader threads by default in the built server: reads (SQL, row conversion, JSON) move off the
 * event loop that answers HTTP. Two even on two cores: measured on the 2-core machine (read.ts over
 * 1,000,000 emails), two threads beat one on every scenario, since a thread waiting for a page
 * from disk leaves the core to the other. From the TypeScript sources (tsx: development and tests)
 * reads run in-process, as parsing does (src/smtp/index.ts), because each thread would first have
 * to compile the sources again.
 */
export function defaultReadThreads(): number {
  if (import.meta.url.endsWith('.ts')) return 0;
  return Math.max(2, Math.min(4, availableParallelism() - 1));
}

/**
 * Reader threads start once reads exceed this many per second. Below it the main thread's share is
 * a few percent of a core, and an appliance polled now and then (or a mail burst watched by one
 * client) does not carry two more isolates and their page caches, some 60 MB.
 */
export const READ_THREADS_START_RATE = 200;

/**
 * Heap limits of a reader thread: old space for the largest answer (an email with a 25 MB body, as
 * text and JSON), and 8 MB semi-spaces (heap-limits.ts), what the read benchmarks were measured
 * with (V8 would otherwise grow them to 16 MB per thread); 4 MB ones cost the main thread 10-20 %
 * per first page when it served reads (docs/PERFORMANCE.md, "Reader threads").
 */
const READER_HEAP = { maxOldGenerationSizeMb: 384, maxYoungGenerationSizeMb: 24 };

/** A thread that failed before it was ready is not started again for this long. */
const RETRY_MS = 10_000;

/**
 * A pool of reader threads, each with a read-only connection of its own, that run read jobs and
 * answer with response bodies.
 *
 * `run` hands a job to the ready thread with the fewest jobs outstanding. While no thread is ready
 * (starting, failed) it returns null and the caller runs the job itself, so a read never waits for
 * a thread to start; while reads are fewer than `startRate` a second, no thread starts at all.
 * (Running reads on the main thread also when the threads are busy was measured and is slower:
 * the main thread is then short of time for HTTP.) Jobs are sent in batches, one
 * message per thread per turn of the event loop (requests that arrive together travel together),
 * and answered in batches. A thread that fails hands its outstanding jobs back to the main thread
 * (`inline`); reads have no effects, so running one again is safe. Threads start on demand, stop
 * after `idleMs` without work, and never keep the process alive.
 */
export function createReadPool(opts: {
  threads: number; idleMs?: number; inline: (job: ReadJob) => string | null | Promise<string | null>; onError?: (err: Error) => void;
  /** Reads per second above which threads start (READ_THREADS_START_RATE unless told). */
  startRate?: number;
} & ({ file: string } | { postgres: PgReaderThreadOptions })) {
  const entry = threadEntry(import.meta.url, 'file' in opts ? 'read-worker' : 'postgres/read-worker');
  const workerData: ReaderThreadOptions | PgReaderThreadOptions = 'file' in opts ? { file: opts.file } : opts.postgres;
  const idleMs = opts.idleMs ?? 30_000;
  let slots: Slot[] = [];
  let seq = 0;
  const idle = idleTimer(idleMs, () => slots.some((s) => s.pending.size > 0), () => {
    const old = slots;
    slots = [];
    for (const s of old) void s.worker.terminate();
  });
  const startRate = opts.startRate ?? READ_THREADS_START_RATE;
  let windowStart = 0;
  let windowReads = 0;
  let flushing: NodeJS.Immediate | null = null;
  let pausedUntil = 0;
  let closed = false;
  // Reads that arrive in one turn of the event loop came in at the same time, from different clients.
  let turnReads = 0;
  let turnEnd: NodeJS.Immediate | null = null;
  let overlappedAt = -Infinity;

  /** Drops a thread; its outstanding jobs are run here instead. */
  function drop(slot: Slot, err: Error | null): void {
    if (!slots.includes(slot)) return;
    slots = slots.filter((s) => s !== slot);
    if (!slot.ready) pausedUntil = Date.now() + RETRY_MS;
    if (err) opts.onError?.(err);
    const jobs = [...slot.pending.values()];
    slot.pending.clear();
    slot.outbox = [];
    void slot.worker.terminate();
    for (const p of jobs) {
      try {
        p.resolve(opts.inline(p.job)); // a promise (PostgreSQL's reads) settles the job when it does
      } catch (e) {
        p.reject(e as Error);
      }
    }
  }

  function answer(slot: Slot, reply: ReadReply): void {
    const p = slot.pending.get(reply.id);
    if (!p) return;
    slot.pending.delete(reply.id);
    if (reply.ok) p.resolve(reply.body);
    else p.reject(new Error(reply.error));
  }

  function spawn(): Slot {
    const worker = new Worker(entry.script, { eval: entry.evaluated, workerData, resourceLimits: ownHeapLimits(READER_HEAP) });
    worker.unref();
    const slot: Slot = { worker, ready: false, pending: new Map(), outbox: [] };
    worker.on('message', (message: ReaderMessage) => {
      if (!Array.isArray(message)) { slot.ready = true; return; }
      for (const reply of message) answer(slot, reply);
      if (slots.every((s) => s.pending.size === 0)) idle.arm();
    });
    worker.on('error', (err) => drop(slot, err));
    worker.on('exit', (code) => drop(slot, closed ? null : new Error(`reader thread exited with code ${code}`)));
    return slot;
  }

  function flush(): void {
    flushing = null;
    for (const s of slots) {
      if (s.outbox.length === 0) continue;
      s.worker.postMessage(JSON.stringify(s.outbox));
      s.outbox = [];
    }
  }


  return {
    /** The job's body from a thread, or null when the caller should run it itself. */
    run(job: ReadJob): Promise<string | null> | null {
      if (closed || opts.threads <= 0) return null;
      const now = Date.now();
      if (now - windowStart >= 1000) { windowStart = now; windowReads = 0; }
      windowReads++;
      // Turns are watched only until a thread exists; after that, outstanding jobs show overlap.
      if (slots.length === 0) {
        if (++turnReads === 2) overlappedAt = now;
        turnEnd ??= setImmediate(() => { turnEnd = null; turnReads = 0; });
      }
      // Threads only for reads that overlap: a client paging through mail one request at a time
      // gains little from a thread but would carry its isolate and page cache (some 25 MB), so the
      // first thread waits for reads that arrive together; a further one for every thread busy.
      const overlap = slots.length === 0 ? now - overlappedAt < 1000 : slots.every((s) => s.pending.size > 0);
      if (slots.length < opts.threads && windowReads > startRate && now >= pausedUntil && overlap) slots.push(spawn());
      let best: Slot | null = null;
      for (const s of slots) if (s.ready && (!best || s.pending.size < best.pending.size)) best = s;
      if (!best) return null;
      idle.cancel();
      const slot = best;
      const id = ++seq;
      return new Promise<string | null>((resolve, reject) => {
        slot.pending.set(id, { job, resolve, reject });
        slot.outbox.push({ id, job });
        flushing ??= setImmediate(flush);
      });
    },
    /** Threads ready now. */
    ready: () => slots.filter((s) => s.ready).length,
    /** Threads started (ready or starting). */
    threads: () => slots.length,
    /** Stops every thread; jobs still outstanding are run here. */
    async close(): Promise<void> {
      closed = true;
      idle.cancel();
      if (flushing) clearImmediate(flushing);
      if (turnEnd) clearImmediate(turnEnd);
      const old = slots;
      for (const s of old) drop(s, null);
      await Promise.all(old.map((s) => s.worker.terminate()));
    },
  };
}
export type ReadPool = ReturnType<typeof createReadPool>;
