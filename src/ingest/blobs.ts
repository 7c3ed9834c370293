import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, mkdirSync, type ReadStream } from 'node:fs';
import { access, open, readFile, rename, unlink, utimes } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { BlobContent, InboundAttachment, SpooledBlob } from '../inbound/types.js';
import type { StoredAttachment } from '../inbound/message.js';

/** Writes `data` to `path` and flushes it to the disk before resolving. */
async function writeSynced(path: string, data: Buffer): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    let offset = 0;
    while (offset < data.length) offset += (await handle.write(data, offset, data.length - offset)).bytesWritten;
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a directory entry (a rename into it) to the disk. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const exists = (path: string) => access(path).then(() => true, () => false);

export const contentSize = (c: BlobContent): number => (Buffer.isBuffer(c) ? c.length : c.size);

/** Writes content to a file under `tmp/` as it arrives, hashing it on the way. */
export interface BlobSpool {
  write(chunk: Buffer): Promise<void>;
  /** Flushes the file to the disk: the content, ready for putBlob. */
  finish(): Promise<SpooledBlob>;
  /** Gives the file up (a parse that failed). */
  discard(): Promise<void>;
}

/**
 * The files of ingestion under the data directory: attachment blobs content-addressed by SHA-256
 * (`blobs/ab/cd/<hex>`, identical content stored once) and raw messages too large for a database
 * row (`raw/<uuid>.eml`). Every file is written under `tmp/`, fsynced, renamed into place and its
 * directory fsynced, so a name that exists always has complete, durable content. `now` dates blobs
 * written again (the server's clock, which tests inject).
 */
export function createBlobStore(dataDir: string, now: () => number = Date.now) {
  const tmpDir = join(dataDir, 'tmp');
  const blobDir = join(dataDir, 'blobs');
  const rawDir = join(dataDir, 'raw');
  for (const d of [tmpDir, blobDir, rawDir]) mkdirSync(d, { recursive: true });

  const blobPath = (sha256: string) => join(blobDir, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  const rawName = (file: string) => `raw/${basename(file)}`;

  return {
    /** Path of the blob with this hash. */
    blobPath,

    /**
     * The file of a raw message as the queue and the journal name it. Names are relative to the
     * data directory (`raw/<uuid>.eml`) so that a data directory copied or mounted elsewhere still
     * finds its files; names written by earlier versions were absolute paths, and their file
     * name is what counts.
     */
    rawFile: (name: string) => join(rawDir, basename(name)),

    /** The name the database and the journal keep for a raw file (see rawFile). */
    rawName,

    /**
     * Stores content durably under its SHA-256 (once), and returns the hash. Content already stored
     * has its file re-dated instead: until the row that names it commits, only its age keeps the
     * orphan sweep (sweep.ts) from removing a blob that nothing references yet, such as one left
     * by purged mail and now arriving again.
     */
    async putBlob(content: BlobContent): Promise<string> {
      const spooled = Buffer.isBuffer(content) ? null : content.spooled;
      const sha256 = Buffer.isBuffer(content) ? createHash('sha256').update(content).digest('hex') : content.sha256;
      const path = blobPath(sha256);
      try {
        const at = new Date(now());
        await utimes(path, at, at);
        if (spooled) await unlink(spooled).catch(() => undefined);
        return sha256;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      const dir = dirname(path);
      mkdirSync(dir, { recursive: true });
      const tmp = spooled ?? join(tmpDir, `${randomUUID()}.blob`);
      if (!spooled) await writeSynced(tmp, content as Buffer);
      await rename(tmp, path);
      await syncDir(dir);
      return sha256;
    },

    /**
     * A file under `tmp/` (named as putBlob's own, so the orphan sweep removes it should nothing
     * adopt it) for content too large to gather in memory first: a 25 MB attachment was held
     * whole, and for a moment twice, by the thread that decoded it.
     */
    async spoolBlob(): Promise<BlobSpool> {
      const path = join(tmpDir, `${randomUUID()}.blob`);
      const handle = await open(path, 'wx', 0o600);
      const hash = createHash('sha256');
      let size = 0;
      let closed = false;
      const close = async () => { if (!closed) { closed = true; await handle.close(); } };
      return {
        async write(chunk) {
          hash.update(chunk);
          let offset = 0;
          while (offset < chunk.length) offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
          size += chunk.length;
        },
        async finish() {
          try {
            await handle.sync();
          } finally {
            await close();
          }
          return { spooled: path, sha256: hash.digest('hex'), size };
        },
        async discard() {
          await close().catch(() => undefined);
          await unlink(path).catch(() => undefined);
        },
      };
    },

    /** A stream of a blob's bytes. */
    openBlob: (sha256: string): ReadStream => createReadStream(blobPath(sha256)),

    /** A blob's bytes. */
    readBlob: (sha256: string) => readFile(blobPath(sha256)),

    /** Whether a blob is there. */
    hasBlob: (sha256: string) => exists(blobPath(sha256)),

    /**
     * Takes ownership of a spooled file under `tmp/`: fsyncs it, moves it into `raw/` and fsyncs
     * that directory. Returns its name (rawName).
     */
    async adoptRaw(path: string): Promise<string> {
      const handle = await open(path, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      const target = join(rawDir, `${randomUUID()}.eml`);
      await rename(path, target);
      await syncDir(rawDir);
      return rawName(target);
    },

    /** Writes raw bytes durably into `raw/`; returns their name (rawName). */
    async putRaw(data: Buffer): Promise<string> {
      const tmp = join(tmpDir, `${randomUUID()}.eml`);
      await writeSynced(tmp, data);
      const target = join(rawDir, `${randomUUID()}.eml`);
      await rename(tmp, target);
      await syncDir(rawDir);
      return rawName(target);
    },

    /** Removes a file the database no longer names (best effort). */
    remove: (path: string) => unlink(path).catch(() => undefined),

    /** The directories, for sweeps. */
    dirs: { tmp: tmpDir, blobs: blobDir, raw: rawDir },
  };
}
export type BlobStore = ReturnType<typeof createBlobStore>;

/** Makes each attachment a durable blob (identical contents once) and returns what is kept of it. */
export function storeAttachments(attachments: InboundAttachment[], blobs: Pick<BlobStore, 'putBlob'>): Promise<StoredAttachment[]> {
  return Promise.all(attachments.map(async (a) => ({
    filename: a.filename, contentType: a.contentType, size: contentSize(a.content), sha256: await blobs.putBlob(a.content),
    contentId: a.contentId ?? null, disposition: a.disposition ?? 'attachment',
  })));
}
