import { appendFileSync, constants, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { createLogger } from '../../src/logger.js';
import { decodeRecord, encodeRecord, HEADER_BYTES, scanSegment, type JournalEntry } from '../../src/inbound/journal-format.js';
import { createJournal } from '../../src/ingest/journal.js';
import { tempDir } from '../helpers/app.js';

const logger = createLogger('silent');
const entry = (n: number, rawPath: string | null = null): JournalEntry => ({
  envelopeJson: JSON.stringify({ mailFrom: `s${n}@example.org`, recipients: ['a@b.test'] }),
  targetsJson: JSON.stringify([{ tenantId: 1, mailboxIds: [n], forwards: [], address: 'a@b.test' }]),
  size: 100 + n, rawPath, acceptedAt: 1_700_000_000_000 + n,
});
const rawOf = (n: number) => Buffer.from(`Subject: ${n}\r\n\r\n${'x'.repeat(n * 10)}\r\n`);
/** The raw message in three pieces, as a DATA stream hands them over. */
const parts = (n: number) => { const r = rawOf(n); return [r.subarray(0, 5), r.subarray(5, 9), r.subarray(9)]; };
const segments = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.log')).sort();
const readRecord = (dir: string, r: { segment: number; offset: number; length: number }) =>
  decodeRecord(readFileSync(join(dir, `${String(r.segment).padStart(10, '0')}.log`)).subarray(r.offset, r.offset + r.length));

test('a record decodes to what was encoded, raw bytes included or absent', (t) => {
  const withRaw = Buffer.concat(encodeRecord(entry(1), parts(1)));
  t.deepEqual(decodeRecord(withRaw).entry, entry(1));
  t.deepEqual(decodeRecord(withRaw).raw, rawOf(1));
  const withoutRaw = Buffer.concat(encodeRecord(entry(2, '/data/raw/x.eml'), null));
  t.deepEqual(decodeRecord(withoutRaw), { entry: entry(2, '/data/raw/x.eml'), raw: null });
  const damaged = Buffer.from(withRaw);
  damaged[damaged.length - 3] ^= 0x20;
  t.throws(() => decodeRecord(damaged), { message: /damaged/ });
});

test('scanning a segment stops at the first record that is cut short or damaged', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'seg.log');
  const records = [1, 2, 3].map((n) => Buffer.concat(encodeRecord(entry(n), parts(n))));
  writeFileSync(file, Buffer.concat(records));
  const whole = scanSegment(file, 7, 0);
  t.deepEqual(whole.records.map((r) => [r.segment, r.offset, r.length]), [[7, 0, records[0].length], [7, records[0].length, records[1].length], [7, records[0].length + records[1].length, records[2].length]]);
  t.is(whole.end, statSync(file).size);
  t.deepEqual(scanSegment(file, 7, records[0].length).records.map((r) => r.offset), [records[0].length, records[0].length + records[1].length], 'from a position');
  // A torn tail: half of a fourth record.
  appendFileSync(file, Buffer.concat(encodeRecord(entry(4), parts(4))).subarray(0, 30));
  t.is(scanSegment(file, 7, 0).records.length, 3);
  t.is(scanSegment(file, 7, 0).end, whole.end);
  // A flipped byte in the second record hides it and everything after it.
  const bytes = readFileSync(file);
  bytes[records[0].length + HEADER_BYTES + 10] ^= 1;
  writeFileSync(file, bytes);
  t.deepEqual(scanSegment(file, 7, 0), { records: [{ segment: 7, offset: 0, length: records[0].length, rawPath: null }], end: records[0].length });
});

test('appended records are pending in order until applied; a restart finds exactly those not applied and cuts a torn tail', async (t) => {
  const dir = tempDir(t);
  const journal = createJournal({ dir, logger, segmentBytes: 400 });
  await journal.open(null);
  // Ten messages in groups: small segments fill up, so they spread over several files.
  for (let n = 0; n < 10; n += 2) await Promise.all([journal.append(entry(n), parts(n)), journal.append(entry(n + 1), parts(n + 1))]);
  t.is(journal.pending, 10);
  t.true(segments(dir).length >= 3, `segments: ${segments(dir)}`);
  const first = journal.take(4, 1 << 20)!;
  t.is(first.refs.length, 4);
  t.deepEqual(first.refs.map((r) => readRecord(dir, r).entry), [0, 1, 2, 3].map((n) => entry(n)));
  t.deepEqual(first.refs.map((r) => readRecord(dir, r).raw), [0, 1, 2, 3].map(rawOf));
  journal.applied(first.end);
  t.is(journal.pending, 6);
  t.is(journal.take(100, 1 << 20)!.refs.length, 6, 'take does not consume');
  t.false(segments(dir).includes(`${String(first.refs[0].segment).padStart(10, '0')}.log`) && first.refs[0].segment < first.end.segment, 'a segment wholly applied is removed');
  await journal.close();

  // A crash during the next write left half a record at the end of the newest segment.
  const newest = segments(dir).at(-1)!;
  const sizeBefore = statSync(join(dir, newest)).size;
  appendFileSync(join(dir, newest), Buffer.concat(encodeRecord(entry(99), parts(99))).subarray(0, 25));
  const again = createJournal({ dir, logger, segmentBytes: 400 });
  await again.open(first.end);
  t.is(again.pending, 6);
  const rest = again.take(100, 1 << 20)!;
  t.deepEqual(rest.refs.map((r) => readRecord(dir, r).entry), [4, 5, 6, 7, 8, 9].map((n) => entry(n)));
  t.is(statSync(join(dir, newest)).size, sizeBefore, 'the torn tail is cut off');
  // New records go after them, in a new segment.
  await again.append(entry(10), parts(10));
  t.is(again.pending, 7);
  t.true(segments(dir).at(-1)! > newest);
  again.applied(again.take(100, 1 << 20)!.end);
  t.is(again.pending, 0);
  t.is(segments(dir).length, 1, 'only the segment being written stays');
  await again.close();
});

test('a group that cannot be written is refused, and later groups are written and pending as usual', async (t) => {
  const dir = join(tempDir(t), 'journal');
  // Every group starts a segment of its own.
  const journal = createJournal({ dir, logger, segmentBytes: 1 });
  await journal.open(null);
  await journal.append(entry(1), parts(1));
  // The directory is replaced by a file: the next segment cannot be created.
  rmSync(dir, { recursive: true });
  writeFileSync(dir, 'not a directory');
  await t.throwsAsync(journal.append(entry(2), parts(2)), { code: 'ENOTDIR' });
  rmSync(dir);
  mkdirSync(dir);
  await journal.append(entry(3), parts(3));
  t.is(journal.pending, 2, 'the refused message is not pending');
  const { refs } = journal.take(10, 1 << 20)!;
  t.is(readRecord(dir, refs[1]).entry.size, entry(3).size);
  await journal.close();
});

test('a segment is written with O_DSYNC, so each group commit is durable when its write returns', async (t) => {
  const dir = tempDir(t);
  const journal = createJournal({ dir, logger });
  await journal.open(null);
  await journal.append(entry(1), parts(1));
  // The open descriptors of this process: the one naming the segment carries its open flags (octal) in fdinfo.
  const fd = readdirSync('/proc/self/fd').find((n) => {
    try { return readlinkSync(`/proc/self/fd/${n}`) === join(dir, segments(dir)[0]); } catch { return false; }
  });
  t.truthy(fd, 'the current segment is open');
  const flags = parseInt(/^flags:\s+(\d+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1], 8);
  t.is(flags & constants.O_DSYNC, constants.O_DSYNC);
  t.is(journal.pending, 1);
  await journal.close();
});

test('a segment being started is kept when everything before it is applied meanwhile', async (t) => {
  const dir = tempDir(t);
  // Every group starts a new segment, and the mover keeps up, as the ingest worker does between
  // bursts: its applying the last pending record often falls while the next segment is being
  // created. That segment once went as if already applied, with the records written to it next.
  const journal = createJournal({ dir, logger, segmentBytes: 1 });
  await journal.open(null);
  let appending = true;
  const missing: number[] = [];
  let turn = 0;
  const mover = (async () => {
    while (appending || journal.pending > 0) {
      const next = journal.take(1000, 1 << 30);
      // The move: the storage thread reads the records' segments, which must all still be there.
      // It takes varying time, so its end falls at every step of starting a segment.
      for (let i = turn++ % 9; i >= 0; i--) await new Promise((r) => setImmediate(r));
      if (!next) continue;
      for (const r of next.refs) if (!segments(dir).includes(`${String(r.segment).padStart(10, '0')}.log`)) missing.push(r.segment);
      journal.applied(next.end);
    }
  })();
  for (let n = 1; n <= 300; n++) await journal.append(entry(n), parts(n));
  appending = false;
  await mover;
  await journal.close();
  t.deepEqual(missing, []);
  t.is(journal.pending, 0);
});
