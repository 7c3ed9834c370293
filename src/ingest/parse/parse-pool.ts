import { Worker } from 'node:worker_threads';
import type { EncodedMessage } from '../../inbound/encoded-message.js';
import type { QueuedRawParser, RawDelivery, RawParser } from '../../inbound/types.js';
import type { Logger } from '../../logger.js';
import { threadEntry } from '../../threads/entry.js';
import { ownHeapLimits } from '../../threads/heap-limits.js';
import { INGEST_THREAD_OLD_MB } from '../../threads/heap-growth.js';
import { idleTimer } from '../../threads/idle.js';

/** What a parser thread is started with. */
export interface ParserThreadOptions {
  /** Where attachment blobs are written (the thread makes them durable itself). */
  dataDir: string;
  /** The database, whose queued raw bytes the thread reads itself (read-only). */
  databaseFile: string;
  hostname: string;
  dnsServers: string[];
  logLevel: string;
}

/** A request to a parser thread: bytes, a spooled file's path, or the queue row the thread reads them from. */
export interface ParseRequest {
  id: number;
  raw: { bytes: Uint8Array } | { path: string } | { inbound: number };
  delivery: Omit<RawDelivery, 'raw'>;
}

/** A parser thread's answer: where in the group's bytes its encoded StoredMessage is, or the error. */
export type ParseReply = { id: number; ok: true; offset: number; length: number } | { id: number; ok: false; error: string };

/**
 * Requests and replies cross in groups: a message to a sleeping thread costs a wake-up of tens of
 * microseconds on a virtual machine, more than the copy, and a batch of the ingest worker asks for
 * all its messages at once.
 */
export type ParseRequests = ParseRequest[];
/** Replies of a group with all their encoded messages in one transferred buffer. */
export interface ParseReplies {
  bytes: Uint8Array;
  replies: ParseReply[];
}

/** Options of the pool: how many threads, how long one message may take, when idle threads go. */
export interface ParserPoolOptions extends ParserThreadOptions {
  threads: number;
  timeoutMs: number;
  idleMs: number;
  /** Threads kept running when the pool goes idle (started by the first message, not at boot). */
  keepWarm?: number;
  logger: Logger;
}

interface Pending {
  resolve(encoded: EncodedMessage): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Requests of this turn of the event loop, posted together. */
  outbox: ParseRequests;
  transfer: ArrayBuffer[];
}

/**
 * Heap limits of a parser thread: old space sized for V8's growing factor (heap-growth.ts), a small
 * young generation (V8 would otherwise grow it to tens of MB per thread under load): 4 MB
 * semi-spaces (heap-limits.ts), 8 MB less resident than 8 MB ones for ~3 % more CPU per message
 * with storage's cut (docs/PERFORMANCE.md, "Allocator, GC and thread settings").
 */
const PARSER_HEAP = { maxOldGenerationSizeMb: INGEST_THREAD_OLD_MB, maxYoungGenerationSizeMb: 12 };

/**
 * A RawParser that runs mailparser and mailauth in worker threads, so parsing (the bulk of the
 * per-message CPU) uses another core and never blocks the event loop that answers SMTP. Threads
 * start on demand and stop after `idleMs` without work; a thread that fails, exits or takes longer
 * than `timeoutMs` for one message is replaced, and its messages are rejected (ingest retries).
 */
export function createParserPool(opts: ParserPoolOptions) {
  const entry = threadEntry(import.meta.url, 'parse-worker');
  const workerData: ParserThreadOptions = { dataDir: opts.dataDir, databaseFile: opts.databaseFile, hostname: opts.hostname, dnsServers: opts.dnsServers, logLevel: opts.logLevel };
  let slots: Slot[] = [];
  let seq = 0;
  const idle = idleTimer(opts.idleMs, () => slots.some((s) => s.pending.size > 0), () => {
    const old = slots.slice(opts.keepWarm ?? 0);
    slots = slots.slice(0, opts.keepWarm ?? 0);
    for (const s of old) void s.worker.terminate();
  });
  let closed = false;

  function fail(slot: Slot, err: Error): void {
    slots = slots.filter((s) => s !== slot);
    for (const p of slot.pending.values()) { clearTimeout(p.timer); p.reject(err); }
    slot.pending.clear();
  }

  function spawn(): Slot {
    const worker = new Worker(entry.script, { eval: entry.evaluated, workerData, resourceLimits: ownHeapLimits(PARSER_HEAP) });
    // Parser threads never keep the process alive; an idle pool lets it exit.
    worker.unref();
    const slot: Slot = { worker, pending: new Map(), outbox: [], transfer: [] };
    worker.on('message', ({ bytes, replies }: ParseReplies) => {
      for (const reply of replies) {
        const p = slot.pending.get(reply.id);
        if (!p) continue;
        slot.pending.delete(reply.id);
        clearTimeout(p.timer);
        if (reply.ok) p.resolve(bytes.subarray(reply.offset, reply.offset + reply.length));
        else p.reject(new Error(reply.error));
      }
      if (slots.every((s) => s.pending.size === 0)) idle.arm();
    });
    worker.on('error', (err) => {
      opts.logger.error({ err }, 'parser thread failed');
      fail(slot, err);
    });
    worker.on('exit', (code) => fail(slot, new Error(`parser thread exited with code ${code}`)));
    return slot;
  }


  function pick(): Slot {
    while (slots.length < opts.threads) slots.push(spawn());
    return slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  const request = (raw: Buffer | ParseRequest['raw'], delivery: Omit<RawDelivery, 'raw'>) => new Promise<EncodedMessage>((resolve, reject) => {
    if (closed) return reject(new Error('parser pool closed'));
    idle.cancel();
    const slot = pick();
    const id = ++seq;
    const timer = setTimeout(() => {
      opts.logger.error({ timeout_ms: opts.timeoutMs }, 'parsing a message took too long; restarting its parser thread');
      void slot.worker.terminate();
    }, opts.timeoutMs);
    slot.pending.set(id, { resolve, reject, timer });
    if (slot.outbox.length === 0) queueMicrotask(() => post(slot));
    if (Buffer.isBuffer(raw)) {
      // A copy of exactly the message's bytes, handed over without a second copy.
      const bytes = new Uint8Array(raw);
      slot.outbox.push({ id, raw: { bytes }, delivery });
      slot.transfer.push(bytes.buffer);
    } else {
      slot.outbox.push({ id, raw, delivery });
    }
  });
  const parse: RawParser = (raw, delivery) => request(Buffer.isBuffer(raw) ? raw : { path: raw.path }, delivery);
  const parseQueued: QueuedRawParser = (inboundId, delivery) => request({ inbound: inboundId }, delivery);

  function post(slot: Slot): void {
    const { outbox, transfer } = slot;
    slot.outbox = [];
    slot.transfer = [];
    slot.worker.postMessage(outbox, transfer);
  }

  return {
    parse,
    parseQueued,
    /** Threads running now. */
    threads: () => slots.length,
    /** Stops every thread; parses still waiting are rejected. */
    async close(): Promise<void> {
      closed = true;
      idle.cancel();
      const old = slots;
      slots = [];
      await Promise.all(old.map((s) => s.worker.terminate()));
    },
  };
}
