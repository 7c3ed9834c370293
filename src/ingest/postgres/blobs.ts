import { createHash } from 'node:crypto';
import type { ReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { BlobStore } from '../blobs.js';

/** Bytes to become a blob row, under their SHA-256. */
export interface BlobData {
  sha256: string;
  data: Buffer;
}

export const sha256Of = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * Attachment contents on PostgreSQL (DECISIONS.md section 17: nodes share nothing but the
 * database): the `blobs` table of migration 013, one row per SHA-256. Rows are written in the
 * transaction that commits what names them (the queue row of API mail, the stored copies of SMTP
 * mail), so a name that commits always has its bytes, and identical contents are stored once.
 */
export const pgBlobs = {
  /**
   * Stores the contents not stored yet. Those stored already are re-dated instead (see `touch`),
   * so their bytes cross the wire only when missing.
   */
  async save(trx: Db, blobs: BlobData[], now: number): Promise<void> {
    const unique = [...new Map(blobs.map((b) => [b.sha256, b])).values()];
    if (unique.length === 0) return;
    const have = await pgBlobs.touch(trx, unique.map((b) => b.sha256), now);
    for (const b of unique) {
      if (have.has(b.sha256)) continue;
      await sql`INSERT INTO blobs (sha256, data, created_at) VALUES (${b.sha256}, ${b.data}, ${now}::bigint)
        ON CONFLICT (sha256) DO UPDATE SET created_at = excluded.created_at`.execute(trx);
    }
  },

  /**
   * Re-dates the blobs among these that exist and answers which they are. The update holds their
   * rows until the caller commits, and the sweep (pg-sweep.ts) takes only blobs older than an
   * hour that nothing names, checked again on a row it had to wait for: a blob about to be named
   * again is never swept from under its new name.
   */
  touch: (trx: Db, hashes: string[], now: number) =>
    hashes.length === 0 ? Promise.resolve(new Set<string>())
      : sql<{ sha256: string }>`UPDATE blobs SET created_at = ${now}::bigint WHERE sha256 = ANY(${hashes}::text[]) RETURNING sha256`.execute(trx)
        .then((r) => new Set(r.rows.map((x) => x.sha256))),

  /** Which of these hashes have a row. */
  present: (db: Db, hashes: string[]) =>
    hashes.length === 0 ? Promise.resolve(new Set<string>())
      : sql<{ sha256: string }>`SELECT sha256 FROM blobs WHERE sha256 = ANY(${hashes}::text[])`.execute(db)
        .then((r) => new Set(r.rows.map((x) => x.sha256))),

  /** A blob's bytes, or null when there is no such blob. */
  read: (db: Db, sha256: string) =>
    sql<{ data: Buffer }>`SELECT data FROM blobs WHERE sha256 = ${sha256}`.execute(db).then((r) => r.rows[0]?.data ?? null),
};

/**
 * The blob store the readers of stored mail get on PostgreSQL: the file store's interface (so
 * attachment downloads, raw rendering and outbound use it unchanged) with its reads answered from
 * the `blobs` table. The files under the data directory are only this node's scratch space there
 * (spooled uploads and what the parser writes before ingest moves it into the table).
 */
export function databaseBlobReads(files: BlobStore, db: Db): BlobStore {
  const readOrThrow = async (sha256: string) => {
    const data = await pgBlobs.read(db, sha256);
    if (!data) throw Object.assign(new Error(`blob ${sha256} not found`), { code: 'ENOENT' });
    return data;
  };
  return {
    ...files,
    hasBlob: (sha256: string) => pgBlobs.present(db, [sha256]).then((s) => s.has(sha256)),
    readBlob: readOrThrow as BlobStore['readBlob'],
    // A stream that reads the row when first pulled (the file store's is a file stream).
    openBlob: (sha256: string) => Readable.from((async function* () { yield await readOrThrow(sha256); })()) as unknown as ReadStream,
  };
}
