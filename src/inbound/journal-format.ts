import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/**
 * The record format of the acceptance journal (journal.ts): a 12-byte header (magic, payload
 * length, CRC-32 of the payload), then the payload: the length of the entry's JSON, the JSON, and
 * the raw message (absent when it lives in a file of its own). The CRC tells a record that a crash
 * cut short from a whole one; nothing after the first bad record was ever acknowledged.
 */
export const RECORD_MAGIC = 0x4d534a31;
export const HEADER_BYTES = 12;
/** Largest payload a record may declare (raw mail over RAW_IN_ROW_BYTES has a file of its own). */
export const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;

/** What a record holds besides the raw bytes: the queue row it becomes. */
export interface JournalEntry {
  envelopeJson: string;
  targetsJson: string;
  size: number;
  rawPath: string | null;
  /** When the message was acknowledged (the queue row's created_at). */
  acceptedAt: number;
}

/** How far the database holds the journal: every record before this place is a queue row. */
export interface JournalPosition {
  segment: number;
  offset: number;
}

/** A record's place in the journal. */
export interface RecordRef {
  segment: number;
  offset: number;
  /** Bytes of the whole record, header included. */
  length: number;
}

/** A record as buffers to write in order: the header with the entry, then the raw bytes' pieces. */
export function encodeRecord(entry: JournalEntry, raw: Buffer[] | null): Buffer[] {
  const json = JSON.stringify(entry);
  const jsonLength = Buffer.byteLength(json);
  const head = Buffer.allocUnsafe(HEADER_BYTES + 4 + jsonLength);
  let rawLength = 0;
  for (const part of raw ?? []) rawLength += part.length;
  head.writeUInt32BE(RECORD_MAGIC, 0);
  head.writeUInt32BE(4 + jsonLength + rawLength, 4);
  head.writeUInt32BE(jsonLength, HEADER_BYTES);
  head.write(json, HEADER_BYTES + 4);
  let crc = crc32(head.subarray(HEADER_BYTES));
  for (const part of raw ?? []) crc = crc32(part, crc);
  head.writeUInt32BE(crc >>> 0, 8);
  return [head, ...(raw ?? []).filter((p) => p.length > 0)];
}

/** Decodes a whole record (as written by encodeRecord); throws when it is not one. */
export function decodeRecord(record: Buffer): { entry: JournalEntry; raw: Buffer | null } {
  const payload = checkedPayload(record);
  if (!payload) throw new Error('journal record is damaged');
  const jsonLength = payload.readUInt32BE(0);
  const entry = JSON.parse(payload.toString('utf8', 4, 4 + jsonLength)) as JournalEntry;
  const raw = payload.length > 4 + jsonLength ? payload.subarray(4 + jsonLength) : null;
  return { entry, raw };
}

/** The payload of a record whose header and CRC check out, else null. */
function checkedPayload(record: Buffer): Buffer | null {
  if (record.length < HEADER_BYTES + 4 || record.readUInt32BE(0) !== RECORD_MAGIC) return null;
  const length = record.readUInt32BE(4);
  if (length < 4 || record.length !== HEADER_BYTES + length) return null;
  const payload = record.subarray(HEADER_BYTES);
  if ((crc32(payload) >>> 0) !== record.readUInt32BE(8)) return null;
  const jsonLength = payload.readUInt32BE(0);
  return jsonLength <= length - 4 ? payload : null;
}

/**
 * The whole records of a segment file from `from` on, and where they end: the first byte that is
 * not a whole record (a crash's torn tail, or the end of the file).
 */
export function scanSegment(path: string, segment: number, from: number): { records: Array<RecordRef & { rawPath: string | null }>; end: number } {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const records: Array<RecordRef & { rawPath: string | null }> = [];
    const head = Buffer.alloc(HEADER_BYTES);
    let offset = from;
    while (offset + HEADER_BYTES <= size) {
      if (readSync(fd, head, 0, HEADER_BYTES, offset) !== HEADER_BYTES) break;
      const length = head.readUInt32BE(4);
      if (head.readUInt32BE(0) !== RECORD_MAGIC || length > MAX_PAYLOAD_BYTES || offset + HEADER_BYTES + length > size) break;
      const record = Buffer.allocUnsafe(HEADER_BYTES + length);
      if (readSync(fd, record, 0, record.length, offset) !== record.length || !checkedPayload(record)) break;
      records.push({ segment, offset, length: record.length, rawPath: decodeRecord(record).entry.rawPath });
      offset += record.length;
    }
    return { records, end: offset };
  } finally {
    closeSync(fd);
  }
}
