import { randomUUID } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { collectYoungGarbage } from '../threads/young-gc.js';

/** Bytes of mail the spools of a thread take between two scavenges they ask for. */
const SCAVENGE_EVERY_BYTES = 4 * 1024 * 1024;
/** Bytes every spool of this thread took since the last scavenge it asked for. */
let receivedSinceScavenge = 0;

/**
 * Where a received message ended up: in memory when small (the chunks as received, never joined:
 * the journal writes them as they are), else in a file of the spool directory.
 */
export type SpooledRaw = { chunks: Buffer[]; length: number } | { path: string };

/** Options of a spool: its directory, the bytes kept in memory before spilling, and the SIZE limit. */
export interface SpoolOptions {
  dir: string;
  /** Bytes written before the message (our Received: header); not counted against `maxBytes`. */
  head: Buffer;
  memoryLimit: number;
  maxBytes: number;
}

async function writeAll(handle: FileHandle, buffer: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset);
    offset += bytesWritten;
  }
}

/**
 * A sink for one DATA stream that counts every byte, keeps small messages in memory and spills
 * larger ones to a file (so a 25 MB message never sits in memory whole), and stops storing once
 * the message is past the SIZE limit while still draining the client's bytes. Piping the DATA
 * stream into it gives the client TCP backpressure while the disk catches up.
 */
export class Spool extends Writable {
  /** Bytes of the message as the client sent them (after dot-unstuffing), head excluded. */
  messageBytes = 0;
  /** True once the message went past `maxBytes`; nothing more is stored. */
  exceeded = false;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private handle: FileHandle | null = null;
  private path: string | null = null;
  private stored = 0;

  constructor(private readonly options: SpoolOptions) {
    // No auto-destroy: a finished spool's file belongs to whoever takes the result.
    super({ highWaterMark: 64 * 1024, autoDestroy: false });
    this.chunks.push(options.head);
    this.buffered = options.head.length;
  }

  /** Total bytes of the stored raw message (head included). */
  get size(): number {
    return this.stored + this.buffered;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.messageBytes += chunk.length;
    // The socket reads behind the chunks are spent once stored: a scavenge every few MB of mail
    // frees them as it goes instead of when V8's own trigger comes (young-gc.ts). Measured in full
    // smtp.ts runs: RSS peak 229-231 MB against 235-251, the 74 KB phase's p99 23-24 ms against
    // 26-36, acknowledgements and CPU within noise (docs/PERFORMANCE.md, "Allocator, GC and thread
    // settings").
    receivedSinceScavenge += chunk.length;
    if (receivedSinceScavenge >= SCAVENGE_EVERY_BYTES) {
      receivedSinceScavenge = 0;
      collectYoungGarbage();
    }
    if (this.exceeded) return callback();
    if (this.messageBytes > this.options.maxBytes) {
      this.exceeded = true;
      this.chunks = [];
      this.buffered = 0;
      this.release().then(() => callback(), callback);
      return;
    }
    if (!this.handle && this.buffered + chunk.length <= this.options.memoryLimit) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      return callback();
    }
    this.spill(chunk).then(() => callback(), callback);
  }

  private async spill(chunk: Buffer): Promise<void> {
    if (!this.handle) {
      const path = join(this.options.dir, `smtp-${randomUUID()}.eml`);
      const handle = await open(path, 'wx', 0o600);
      // The client may have gone away while the file was being created.
      if (this.destroyed) {
        await handle.close().catch(() => undefined);
        await unlink(path).catch(() => undefined);
        return;
      }
      this.path = path;
      this.handle = handle;
      const pending = Buffer.concat(this.chunks, this.buffered);
      this.chunks = [];
      this.stored += this.buffered;
      this.buffered = 0;
      await writeAll(this.handle, pending);
    }
    if (!this.handle) return;
    await writeAll(this.handle, chunk);
    this.stored += chunk.length;
  }

  override _final(callback: (err?: Error | null) => void): void {
    const handle = this.handle;
    if (!handle) return callback();
    this.handle = null;
    handle.close().then(() => callback(), callback);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    // Destroyed before the message was complete (client gone, timeout): nothing is kept.
    if (this.writableFinished) return callback(err);
    this.release().then(() => callback(err), () => callback(err));
  }

  /** The stored message once the stream finished. */
  result(): SpooledRaw {
    if (this.path) return { path: this.path };
    return { chunks: this.chunks, length: this.buffered };
  }

  /** Deletes whatever was stored (an oversized, aborted or refused message). */
  async release(): Promise<void> {
    const handle = this.handle;
    const path = this.path;
    this.handle = null;
    this.path = null;
    this.chunks = [];
    this.buffered = 0;
    this.stored = 0;
    if (handle) await handle.close().catch(() => undefined);
    if (path) await unlink(path).catch(() => undefined);
  }
}
