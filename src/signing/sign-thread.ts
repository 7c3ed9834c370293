import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import { threadEntry } from '../threads/entry.js';
import { ownHeapLimits } from '../threads/heap-limits.js';
import { idleTimer } from '../threads/idle.js';

/** One message to sign in the signing thread. */
export interface SignRequest {
  id: number;
  raw: Uint8Array;
  pem: string;
  domain: string;
  selector: string;
  authservId: string;
  authResults: string;
  /** Signature time, ms since the epoch. */
  now: number;
}

/** The header fields to prepend (ARC set and DKIM-Signature), or why there are none. */
export interface SignReply {
  id: number;
  ok: boolean;
  head?: Uint8Array;
  error?: string;
}

/** A small heap: one message and its header fields at a time per request. */
const SIGNING_HEAP = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 8 };

/**
 * ARC sealing and DKIM signing of forwards off the main thread (sign-worker.ts). On the main
 * thread the header work around the three RSA operations (canonicalisation, formatting, three
 * hand-offs to libuv's pool) took ~0.35 ms a forward, in the event loop that also answers SMTP.
 * One thread, started on demand and stopped after `idleMs` without work; one that fails, exits
 * or takes longer than `timeoutMs` is replaced and its requests are rejected (the caller signs
 * in its own thread then).
 */
export function createSigningThread(opts: { idleMs: number; timeoutMs: number; logger: Logger }) {
  const entry = threadEntry(import.meta.url, 'sign-worker');
  let worker: Worker | null = null;
  let started = 0;
  let exited = 0;
  let seq = 0;
  const pending = new Map<number, { worker: Worker; resolve: (head: Buffer) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  const idle = idleTimer(opts.idleMs, () => pending.size > 0, () => {
    const w = worker;
    worker = null;
    void w?.terminate();
  });
  let closed = false;

  /** Rejects the requests of thread `w` (all of them without `w`). */
  function failAll(err: Error, w?: Worker): void {
    for (const [id, p] of pending) {
      if (w && p.worker !== w) continue;
      clearTimeout(p.timer);
      pending.delete(id);
      p.reject(err);
    }
  }

  function spawn(): Worker {
    const w = new Worker(entry.script, { eval: entry.evaluated, resourceLimits: ownHeapLimits(SIGNING_HEAP) });
    started += 1;
    // Never keeps the process alive.
    w.unref();
    w.on('message', (reply: SignReply) => {
      const p = pending.get(reply.id);
      if (!p) return;
      pending.delete(reply.id);
      clearTimeout(p.timer);
      if (reply.ok && reply.head) p.resolve(Buffer.from(reply.head.buffer, reply.head.byteOffset, reply.head.byteLength));
      else p.reject(new Error(reply.error ?? 'signing failed'));
      if (pending.size === 0) idle.arm();
    });
    w.on('error', (err) => {
      opts.logger.error({ err }, 'signing thread failed');
      if (worker === w) worker = null;
      failAll(err, w);
    });
    w.on('exit', (code) => {
      exited += 1;
      if (worker === w) worker = null;
      // A thread stopped while idle has nothing pending; any other exit fails what it held.
      failAll(new Error(`signing thread exited with code ${code}`), w);
    });
    return w;
  }

  return {
    /** The ARC set and DKIM-Signature for `raw` (no arriving ARC set), to be prepended to it. */
    sign(raw: Buffer, req: Omit<SignRequest, 'id' | 'raw'>): Promise<Buffer> {
      return new Promise((resolve, reject) => {
        if (closed) { reject(new Error('signing thread closed')); return; }
        idle.cancel();
        worker ??= spawn();
        const w = worker;
        const id = ++seq;
        const timer = setTimeout(() => {
          opts.logger.error({ timeout_ms: opts.timeoutMs }, 'signing a message took too long; restarting the signing thread');
          if (worker === w) worker = null;
          void w.terminate();
        }, opts.timeoutMs);
        pending.set(id, { worker: w, resolve, reject, timer });
        w.postMessage({ id, raw, ...req } satisfies SignRequest);
      });
    },
    /** Threads started and exited so far (a test sees the idle stop end a thread). */
    threads(): { started: number; exited: number } {
      return { started, exited };
    },
    /** Stops the thread; requests still pending are rejected. */
    async close(): Promise<void> {
      closed = true;
      idle.cancel();
      const w = worker;
      worker = null;
      failAll(new Error('signing thread closed'));
      await w?.terminate();
    },
  };
}
export type SigningThread = ReturnType<typeof createSigningThread>;
