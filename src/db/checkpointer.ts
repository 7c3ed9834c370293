import { Worker } from 'node:worker_threads';
import { threadEntry } from '../threads/entry.js';
import { ownHeapLimits } from '../threads/heap-limits.js';

/** What the checkpoint thread is started with. */
export interface CheckpointThreadData {
  file: string;
  /** Pause between checkpoints while they find frames to copy. */
  activeMs: number;
  /** Pause after a checkpoint that found nothing new. */
  idleMs: number;
  /** WAL length (frames) from which a checkpoint also makes the WAL start over. */
  restartFrames: number;
}

/** A thread of a few MB: better-sqlite3 and nothing else. */
const CHECKPOINT_HEAP = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 };

/**
 * Runs WAL checkpoints in a thread of their own (checkpoint-worker.ts) for the connections opened
 * with `checkpoints: 'background'`. A thread that fails is started again after a second; until
 * then the WAL grows up to the writers' own checkpoint (BACKGROUND_RESTART_PAGES in connection.ts).
 */
export function startCheckpointer(file: string, opts: Partial<Omit<CheckpointThreadData, 'file'>> & { onError?(err: unknown): void } = {}) {
  const entry = threadEntry(import.meta.url, 'checkpoint-worker');
  const workerData: CheckpointThreadData = { file, activeMs: opts.activeMs ?? 20, idleMs: opts.idleMs ?? 500, restartFrames: opts.restartFrames ?? 2048 };
  let worker: Worker | null = null;
  let closed = false;
  let restart: NodeJS.Timeout | null = null;

  function spawn(): void {
    const w = new Worker(entry.script, { eval: entry.evaluated, workerData, resourceLimits: ownHeapLimits(CHECKPOINT_HEAP) });
    w.unref();
    w.on('message', (m: { error?: string }) => { if (m.error) opts.onError?.(new Error(m.error)); });
    w.on('error', (err) => opts.onError?.(err));
    w.on('exit', () => {
      if (worker !== w) return;
      worker = null;
      if (closed) return;
      restart = setTimeout(spawn, 1000);
      restart.unref();
    });
    worker = w;
  }

  spawn();
  return {
    /** Ends the thread after the checkpoint under way. */
    async close(): Promise<void> {
      closed = true;
      if (restart) clearTimeout(restart);
      const w = worker;
      worker = null;
      if (!w) return;
      const exited = new Promise<void>((r) => w.once('exit', () => r()));
      // Held while it closes: an unreferenced thread would let the process end mid-shutdown.
      w.ref();
      w.postMessage('close');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())]);
      await w.terminate();
    },
  };
}
export type Checkpointer = ReturnType<typeof startCheckpointer>;
