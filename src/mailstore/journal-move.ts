import { closeSync, openSync, readSync } from 'node:fs';
import type { Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import { decodeRecord, type JournalPosition, type RecordRef } from '../inbound/journal-format.js';
import type { IngestStore } from './inbound-store.js';
import type { InboundTable } from '../db/tables/ingest.js';

/** Journal records to turn into queue rows, read from the segment files by the storage thread. */
export interface MoveInput {
  /** The segment files, by number. */
  paths: Record<number, string>;
  refs: RecordRef[];
  end: JournalPosition;
}

/** Reads of up to this many bytes reuse one buffer. */
const SCRATCH_MAX = 4 * 1024 * 1024;
let scratch: Buffer | null = null;

/**
 * A buffer for one move's reads. Reused because a fresh multi-megabyte buffer per move stays
 * resident until the thread's next full GC; the rows bound from it are copied by SQLite, so it is
 * free again once the move's transaction has run.
 */
function moveBuffer(bytes: number): Buffer {
  if (bytes > SCRATCH_MAX) return Buffer.allocUnsafeSlow(bytes);
  if (!scratch || scratch.length < bytes) scratch = Buffer.allocUnsafeSlow(Math.max(bytes, 1024 * 1024));
  return scratch;
}

/** Reads records from their segments: each run of adjacent records in one read, sliced per record. */
function readRecords(input: MoveInput): Buffer[] {
  const out: Buffer[] = [];
  const buffer = moveBuffer(input.refs.reduce((n, ref) => n + ref.length, 0));
  let at = 0;
  let i = 0;
  while (i < input.refs.length) {
    const first = input.refs[i];
    let j = i + 1;
    let end = first.offset + first.length;
    while (j < input.refs.length && input.refs[j].segment === first.segment && input.refs[j].offset === end) end += input.refs[j++].length;
    const run = buffer.subarray(at, at + end - first.offset);
    at += run.length;
    const fd = openSync(input.paths[first.segment], 'r');
    try {
      if (readSync(fd, run, 0, run.length, first.offset) !== run.length) throw new Error(`journal segment ${first.segment} is shorter than its records`);
    } finally {
      closeSync(fd);
    }
    for (let k = i; k < j; k++) out.push(run.subarray(input.refs[k].offset - first.offset, input.refs[k].offset - first.offset + input.refs[k].length));
    i = j;
  }
  return out;
}

/** What a move did: rows queued, and the places of records that no longer pass their CRC. */
export interface MoveResult {
  moved: number;
  damaged: Array<{ segment: number; offset: number }>;
}

/**
 * The move's transaction body: a queue row per record (as the acceptance would have written it)
 * and the journal position after the last, together, so each record becomes exactly one row. A
 * record damaged on disk since it was written is passed over (and reported): retrying it would
 * stop every message after it.
 */
export async function moveRecords(trx: Db, store: IngestStore, input: MoveInput): Promise<MoveResult> {
  const rows: Insertable<InboundTable>[] = [];
  const damaged: MoveResult['damaged'] = [];
  readRecords(input).forEach((record, i) => {
    let decoded;
    try {
      decoded = decodeRecord(record);
    } catch {
      damaged.push({ segment: input.refs[i].segment, offset: input.refs[i].offset });
      return;
    }
    const { entry, raw } = decoded;
    rows.push({
      kind: 'smtp', message: entry.envelopeJson, targets: entry.targetsJson, raw: entry.rawPath ? null : raw ?? Buffer.alloc(0),
      raw_path: entry.rawPath, size: entry.size, error: null, created_at: entry.acceptedAt, done_at: null,
    });
  });
  await store.insertInbound(trx, rows);
  await store.saveJournalPosition(trx, input.end);
  return { moved: rows.length, damaged };
}
