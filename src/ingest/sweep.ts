import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { BlobStore } from './blobs.js';
import type { StoredMessage } from '../inbound/message.js';
import type { IngestStore } from '../mailstore/inbound-store.js';

/** Files younger than this are left alone: an acceptance may be about to commit the row naming them. */
export const ORPHAN_AGE_MS = 60 * 60 * 1000;
const CHUNK = 500;
// Names ingest writes under tmp/ (the SMTP spool's smtp-*.eml files are its own).
const OWN_TMP = /^[0-9a-f-]{36}\.(blob|eml)$/;

async function olderThan(path: string, limit: number): Promise<boolean> {
  const s = await stat(path).catch(() => null);
  return s !== null && s.mtimeMs < limit;
}

/**
 * Removes files no row names any more: blobs whose attachments were purged (or whose message was
 * refused after its blobs were written), raw files of removed inbound rows, and half-written
 * temporary files of a crash. Only files older than ORPHAN_AGE_MS go. Returns how many were removed.
 */
export function createOrphanSweep({ db, store, blobs, clock, logger, journalRawPaths }: {
  db: Db; store: IngestStore; blobs: BlobStore; clock: Clock; logger: Logger;
  /** Raw files named by acceptance-journal records not yet in the queue. */
  journalRawPaths?: () => Set<string>;
}) {
  return async function sweep(): Promise<number> {
    const limit = clock.now() - ORPHAN_AGE_MS;
    let removed = 0;
    const queued = new Set<string>();
    for (const text of await store.queuedApiMessages(db)) {
      for (const a of (JSON.parse(text) as StoredMessage).attachments) queued.add(a.sha256);
    }
    const blobNames: string[] = [];
    for (const a of await readdir(blobs.dirs.blobs).catch(() => [] as string[])) {
      for (const b of await readdir(join(blobs.dirs.blobs, a)).catch(() => [] as string[])) {
        for (const name of await readdir(join(blobs.dirs.blobs, a, b)).catch(() => [] as string[])) blobNames.push(name);
      }
    }
    for (let i = 0; i < blobNames.length; i += CHUNK) {
      const part = blobNames.slice(i, i + CHUNK).filter((h) => /^[0-9a-f]{64}$/.test(h) && !queued.has(h));
      const used = await store.referencedBlobs(db, part);
      for (const h of part) {
        if (used.has(h) || !(await olderThan(blobs.blobPath(h), limit))) continue;
        await blobs.remove(blobs.blobPath(h));
        removed++;
      }
    }
    // By file name: rows of earlier versions name their raw files by absolute paths, which a data
    // directory copied or mounted elsewhere no longer matches.
    const named = new Set<string>();
    for (const p of [...(await store.rawPaths(db)), ...(journalRawPaths?.() ?? [])]) named.add(basename(p));
    for (const name of await readdir(blobs.dirs.raw).catch(() => [] as string[])) {
      const path = join(blobs.dirs.raw, name);
      if (named.has(name) || !(await olderThan(path, limit))) continue;
      await blobs.remove(path);
      removed++;
    }
    for (const name of await readdir(blobs.dirs.tmp).catch(() => [] as string[])) {
      const path = join(blobs.dirs.tmp, name);
      if (!OWN_TMP.test(name) || !(await olderThan(path, limit))) continue;
      await blobs.remove(path);
      removed++;
    }
    if (removed > 0) logger.info({ removed }, 'orphaned ingest files removed');
    return removed;
  };
}
