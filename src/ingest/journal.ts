import { constants, mkdirSync, readdirSync, statSync, truncateSync, unlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import { createGroupCommit, type Outcome } from './group-commit.js';
import { encodeRecord, scanSegment, type JournalEntry, type JournalPosition, type RecordRef } from '../inbound/journal-format.js';

/** A segment is closed and a new one started past this size; a segment goes once all its records are in the database. */
export const SEGMENT_BYTES = 64 * 1024 * 1024;

/** A record not yet moved into the database, with the raw file it names (kept from the orphan sweep). */
type Pending = RecordRef & { rawPath: string | null };

/**
 * Segments are written with O_DSYNC: a write returns once its bytes (and the file size) are on
 * disk, as a write followed by fdatasync would, in one system call and one trip through libuv's
 * thread pool instead of two. A platform without the flag (Windows) gets the fdatasync instead.
 */
const WRITES_SYNC = typeof constants.O_DSYNC === 'number';
const SEGMENT_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (WRITES_SYNC ? constants.O_DSYNC : 0);

const SEGMENT_NAME = /^(\d{10})\.log$/;
const segmentName = (n: number) => `${String(n).padStart(10, '0')}.log`;

/**
 * The acceptance journal: where SMTP mail is made durable before its 250. Records are appended to
 * a segment file in group commits (one O_DSYNC write for every message that arrived meanwhile)
 * by the thread that answers SMTP, so an acknowledgement never waits for a database transaction,
 * nor behind the storage thread's batches. The ingest worker moves records into the
 * inbound queue in large transactions that also record how far they got (journal_state), so a
 * crash replays exactly the records not yet moved: each acknowledged message becomes one queue row.
 */
export function createJournal(deps: { dir: string; logger: Logger; segmentBytes?: number }) {
  const { dir } = deps;
  const segmentBytes = deps.segmentBytes ?? SEGMENT_BYTES;
  const log = deps.logger.child({ component: 'journal' });
  const pending: Pending[] = [];
  /** Segment files on disk, by number. */
  const segments = new Set<number>();
  let current: { segment: number; handle: FileHandle; size: number } | null = null;
  let nextSegment = 1;
  const pathOf = (n: number) => join(dir, segmentName(n));

  /** Starts the next segment (at the first append after start, when one is full, after a failed write). */
  async function startSegment(): Promise<void> {
    if (current) await current.handle.close();
    current = null;
    const segment = nextSegment++;
    const handle = await open(pathOf(segment), SEGMENT_FLAGS, 0o600);
    segments.add(segment);
    const dirHandle = await open(dir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
    current = { segment, handle, size: 0 };
  }

  async function commit(jobs: Array<{ entry: JournalEntry; raw: Buffer[] | null }>): Promise<Outcome<void>[]> {
    if (!current || current.size >= segmentBytes) await startSegment();
    const seg = current!;
    const buffers: Buffer[] = [];
    const refs: Pending[] = [];
    let offset = seg.size;
    for (const j of jobs) {
      const parts = encodeRecord(j.entry, j.raw);
      const length = parts.reduce((n, b) => n + b.length, 0);
      refs.push({ segment: seg.segment, offset, length, rawPath: j.entry.rawPath });
      buffers.push(...parts);
      offset += length;
    }
    try {
      let position = seg.size;
      let rest = buffers;
      while (rest.length > 0) {
        let { bytesWritten } = await seg.handle.writev(rest, position);
        if (bytesWritten === 0) throw new Error('acceptance journal: the disk took no bytes');
        position += bytesWritten;
        const left: Buffer[] = [];
        for (const b of rest) {
          if (bytesWritten >= b.length) { bytesWritten -= b.length; continue; }
          left.push(bytesWritten > 0 ? b.subarray(bytesWritten) : b);
          bytesWritten = 0;
        }
        rest = left;
      }
      if (!WRITES_SYNC) await seg.handle.datasync();
    } catch (err) {
      // The group is refused (451: the senders retry). Its bytes are cut off where possible, and
      // later groups go to a new segment, so they never sit behind a damaged record.
      current = null;
      await seg.handle.truncate(seg.size).catch(() => undefined);
      await seg.handle.close().catch(() => undefined);
      log.error({ err, segment: seg.segment }, 'acceptance journal write failed; continuing in a new segment');
      throw err;
    }
    seg.size = offset;
    pending.push(...refs);
    return jobs.map(() => ({ ok: true, value: undefined }));
  }

  const group = createGroupCommit(commit);

  return {
    /**
     * Recovers the journal: segments the database already holds whole go, and the whole records
     * of the others after `applied` are pending again. A segment's torn tail (a crash during a
     * write, or a failed write: never acknowledged either way) is cut off; a failed write's
     * successors are in later segments. New records go to a new segment.
     */
    async open(applied: JournalPosition | null): Promise<void> {
      mkdirSync(dir, { recursive: true });
      const numbers = readdirSync(dir).map((n) => SEGMENT_NAME.exec(n)).filter((m): m is RegExpExecArray => m !== null)
        .map((m) => Number(m[1])).sort((a, b) => a - b);
      for (const n of numbers) {
        nextSegment = Math.max(nextSegment, n + 1);
        if (applied && n < applied.segment) {
          unlinkSync(pathOf(n));
          continue;
        }
        segments.add(n);
        const from = applied && n === applied.segment ? applied.offset : 0;
        const { records, end } = scanSegment(pathOf(n), n, from);
        pending.push(...records);
        if (end < statSync(pathOf(n)).size) {
          log.warn({ segment: n, offset: end }, 'acceptance journal: torn tail cut off (never acknowledged)');
          truncateSync(pathOf(n), end);
        }
      }
      if (pending.length) log.info({ records: pending.length }, 'acceptance journal: records to move into the queue');
    },

    /** Appends a message (its raw bytes in pieces, written as they are); resolves once it is durable (acknowledge it then), rejects when it is not. */
    append(entry: JournalEntry, raw: Buffer[] | null): Promise<void> {
      return group.submit({ entry, raw });
    },

    /** The oldest pending records, up to `maxRows` and about `maxBytes`, and the place after the last. */
    take(maxRows: number, maxBytes: number): { refs: RecordRef[]; end: JournalPosition } | null {
      if (pending.length === 0) return null;
      const refs: RecordRef[] = [];
      let bytes = 0;
      for (const r of pending) {
        if (refs.length >= maxRows || (refs.length > 0 && bytes + r.length > maxBytes)) break;
        refs.push({ segment: r.segment, offset: r.offset, length: r.length });
        bytes += r.length;
      }
      const last = refs[refs.length - 1];
      return { refs, end: { segment: last.segment, offset: last.offset + last.length } };
    },

    /** Told once the database durably holds every record before `end`: they stop being pending and whole segments go. */
    applied(end: JournalPosition): void {
      let n = 0;
      while (n < pending.length && (pending[n].segment < end.segment || (pending[n].segment === end.segment && pending[n].offset < end.offset))) n++;
      pending.splice(0, n);
      // With nothing pending, the newest segment stays: it is being written, or being started (a
      // group commit waits for its directory entry to be synced, and `current` is not yet set).
      // Deleting it then lost every record written to it next (test/ingest/journal.test.ts).
      const keepFrom = pending.length ? pending[0].segment : nextSegment - 1;
      for (const n of segments) {
        if (n >= keepFrom || n === current?.segment) continue;
        segments.delete(n);
        try { unlinkSync(pathOf(n)); } catch { /* already gone */ }
      }
    },

    /** Records not yet moved into the queue. */
    get pending(): number {
      return pending.length;
    },

    /** Raw files named by records not yet moved (the orphan sweep keeps them). */
    pendingRawPaths(): Set<string> {
      return new Set(pending.flatMap((p) => (p.rawPath ? [p.rawPath] : [])));
    },

    /** The path of a segment, for readers. */
    pathOf,

    async close(): Promise<void> {
      if (current) await current.handle.close();
      current = null;
    },
  };
}
export type Journal = ReturnType<typeof createJournal>;
