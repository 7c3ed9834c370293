import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { BlobStore } from './blobs.js';
import type { Failure, ParsedRaw, StoreResult } from '../mailstore/commits.js';
import { logFilterErrors } from '../sieve-store/filter.js';
import type { Journal } from './journal.js';
import { BATCH_ROWS, BUSY_PAUSE_RATIO, DEFAULT_DRAIN_MS_PER_ROW, inflowDelayMs, LOADED_BATCH_ROWS, pace } from './pace.js';
import type { Envelope, Target } from '../inbound/message.js';
import type { StorageThread } from '../mailstore/sqlite/storage-thread.js';
import { createBlame } from './isolate.js';
import { storeInParts } from './split-batch.js';
import { MAX_ATTEMPTS, retryDelayMs } from '../mailstore/set-aside.js';
import type { IngestStore } from '../mailstore/inbound-store.js';
import { screeningOf } from '../spam/screening.js';
import type { VerdictCounts } from '../spam/filing.js';
import type { QueuedRawParser, RawParser } from '../inbound/types.js';

/** Bytes of queued messages per batch (raw rows are loaded whole). */
export const BATCH_BYTES = 8 * 1024 * 1024;
/** Journal records moved into the queue per transaction. */
const MOVE_ROWS = 1024;
/** Bytes of journal records per move: the storage thread reads them into one buffer and binds them to its inserts. */
const MOVE_BYTES = 2 * 1024 * 1024;
export { MAX_ATTEMPTS } from '../mailstore/set-aside.js';
const POLL_MS = 1000;
/** How long mail may wait with nothing stored before the worker warns (and again after as long). */
export const STALL_WARN_MS = 30_000;
/** Longest pause between batches while mail arrives (a slow parse must not stall storage). */
const MAX_PAUSE_MS = 100;

type InboundRow = Awaited<ReturnType<IngestStore['loadWithoutRaw']>>[number] & { raw?: Buffer | null };

/**
 * The ingest processor: takes queued inbound rows in batches, parses raw SMTP mail with the
 * registered parser (outside any transaction; attachment blobs fsynced first), then in ONE
 * transaction per batch, run by the storage thread, stores a copy per destination mailbox with its index entries, records
 * `email.received` events, queues forwards and marks the rows done. A crash rolls the batch back
 * and the rows are still queued at the next start, so every accepted message is stored once.
 */
export function createIngestWorker(deps: {
  db: Db; store: IngestStore; blobs: BlobStore; thread: StorageThread; clock: Clock; logger: Logger; parser: () => RawParser | null;
  /** Where SMTP mail is made durable before its 250; its records are moved into the queue first. */
  journal: Journal;
  /** Set when the parser reads raw bytes from their queue row itself: the rows are then loaded without them. */
  queuedParser?: () => QueuedRawParser | null;
  /** Told after a stored batch that queued outbound forwards (they are committed now). */
  onForwardsQueued?: () => void;
  /** Told after a stored batch of the mailboxes that got mail (committed now: IMAP IDLE announces it). */
  onStored?: (mailboxIds: number[]) => void;
  /** Told after a stored batch of the spam verdicts its copies got (/metrics). */
  onVerdicts?: (v: VerdictCounts) => void;
}) {
  const { db, store, blobs, clock, logger } = deps;
  const log = logger.child({ component: 'ingest' });
  const retryAt = new Map<number, number>();
  let running = false;
  let again = false;
  let stopped = true;
  /** The batch the storage thread is storing now (stop waits for it). */
  let storing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  /** Parses a raw SMTP row (the parser makes its attachments durable blobs). */
  async function prepare(row: InboundRow): Promise<ParsedRaw> {
    const targets = JSON.parse(row.targets) as Target[];
    const envelope = JSON.parse(row.message) as Envelope;
    const parse = deps.parser()!;
    const { recipients: _addresses, ...rest } = envelope;
    const recipients = targets.map((t) => ({ address: t.address, resolution: { kind: 'deliver' as const, tenantId: t.tenantId, mailboxIds: t.mailboxIds, forwards: t.forwards } }));
    const delivery = { ...rest, recipients };
    // Rows are loaded without their raw bytes when the parser reads them itself (prepareBatch).
    const queued = deps.queuedParser?.() ?? null;
    let encoded;
    if (row.raw_path) encoded = await parse({ path: blobs.rawFile(row.raw_path) }, delivery);
    else if (row.raw) encoded = await parse(row.raw, delivery);
    else if (queued) encoded = await queued(row.id, delivery);
    else throw new Error(`inbound row ${row.id} has no raw bytes`);
    return { id: row.id, targets, encoded, mailFrom: envelope.mailFrom, size: row.size, screening: screeningOf(envelope), rawPath: row.raw_path };
  }

  /** Whether a split whose every message fails counts them (isolate.ts). */
  const blame = createBlame();

  /** Rows picked for a batch and not yet stored: the next batch must not pick them again. */
  const inFlight = new Set<number>();

  /** A batch ready for the storage thread. */
  type Ready = { picked: number[]; apiIds: number[]; prepared: ParsedRaw[]; failed: Failure[]; attempts: Map<number, number>; now: number };

  /**
   * Where the next batch reads the queue from: batches take rows in id order, so each one starts
   * after the last row picked, without reading a backlog of tens of thousands of rows from the
   * front again. Once nothing is left after it, reading starts over from the front, for rows
   * passed over meanwhile (a retry not yet due, raw mail before a parser was registered).
   */
  let after = 0;

  async function nextReady(maxRows: number, now: number) {
    const hasParser = deps.parser() !== null;
    const eligible = (r: { id: number; kind: 'api' | 'smtp' }) => !inFlight.has(r.id) && (r.kind === 'api' || hasParser) && (retryAt.get(r.id) ?? 0) <= now;
    let ready = (await store.queued(db, after, maxRows)).filter(eligible);
    if (ready.length === 0 && after > 0) {
      after = 0;
      ready = (await store.queued(db, 0, maxRows + inFlight.size)).filter(eligible);
    }
    return ready;
  }

  /** Picks up to `maxRows` queued rows (and BATCH_BYTES) and parses the raw SMTP ones; null when nothing is ready. */
  async function prepareBatch(maxRows: number): Promise<Ready | null> {
    const now = clock.now();
    const ready = await nextReady(maxRows, now);
    const picked: number[] = [];
    const kinds = new Map<number, 'api' | 'smtp'>();
    let bytes = 0;
    for (const r of ready) {
      if (picked.length >= maxRows || (picked.length > 0 && bytes + r.size > BATCH_BYTES)) break;
      picked.push(r.id);
      kinds.set(r.id, r.kind);
      bytes += r.size;
    }
    if (picked.length === 0) return null;
    after = Math.max(after, picked[picked.length - 1]);
    for (const id of picked) inFlight.add(id);
    try {
      // API rows are read and stored by the storage thread; raw SMTP mail is parsed here first.
      const smtpIds = picked.filter((id) => kinds.get(id) === 'smtp');
      const apiIds = picked.filter((id) => kinds.get(id) === 'api');
      // A parser that reads queue rows itself gets ids; the raw bytes then never pass through this thread.
      const rows: InboundRow[] = smtpIds.length === 0 ? [] : deps.queuedParser?.() ? await store.loadWithoutRaw(db, smtpIds) : await store.load(db, smtpIds);
      const prepared: ParsedRaw[] = [];
      const failed: Failure[] = [];
      // The whole batch is asked for at once: the parser sets its own concurrency (parse.ts), and
      // parser threads take a batch's requests in one message.
      const outcomes = await Promise.all(rows.map(async (row) => {
        try {
          return await prepare(row);
        } catch (err) {
          // Stopping: the closing parser threads cut this parse off, and the row stays queued for the next start.
          if (stopped) return null;
          const final = row.attempts + 1 >= MAX_ATTEMPTS;
          failed.push({ id: row.id, error: (err as Error)?.message ?? String(err), final });
          log.warn({ err, inbound_id: row.id, final }, 'inbound message could not be prepared');
          return null;
        }
      }));
      for (const p of outcomes) if (p) prepared.push(p);
      return { picked, apiIds, prepared, failed, attempts: new Map(rows.map((r) => [r.id, r.attempts])), now };
    } catch (err) {
      release(picked);
      throw err;
    }
  }

  /** Lets rows picked and not stored go back to the queue's readers, and the cursor back to the first of them. */
  function release(picked: number[]): void {
    if (picked.length === 0) return;
    for (const id of picked) inFlight.delete(id);
    after = Math.min(after, picked[0] - 1);
  }

  /** Has the storage thread store a prepared batch in one transaction (else in parts, split-batch.ts), then cleans up after it. */
  async function storeBatch(b: Ready): Promise<void> {
    let unlink: string[];
    let forwarded: number;
    let mailboxIds: number[];
    let verdicts: VerdictCounts;
    let filterErrors: StoreResult['filterErrors'];
    let smtpDone = b.prepared.length + b.failed.filter((f) => f.final).length;
    let retry: Array<{ id: number; attempts: number }> = [];
    try {
      ({ unlink, forwarded, mailboxIds, verdicts, filterErrors } = await deps.thread.store({ apiIds: b.apiIds, prepared: b.prepared, failed: b.failed }));
      blame.stored();
    } catch (err) {
      if (stopped) { release(b.picked); throw err; }
      log.warn({ reason: (err as Error)?.message, rows: b.picked.length }, 'ingest batch failed; storing it in parts');
      try {
        const apart = await storeInParts(b, { thread: deps.thread, blame, stopping: () => stopped, log });
        if (!apart) throw err;
        ({ unlink, forwarded, mailboxIds, verdicts, filterErrors } = apart.result);
        ({ smtpDone, retry } = apart);
      } catch (e) {
        // Every message failed and none was counted (the database's fault, isolate.ts): they wait
        // a while, so they neither spin nor hold back mail that arrives meanwhile.
        if (!stopped) for (const id of b.picked) retryAt.set(id, b.now + retryDelayMs(0));
        release(b.picked);
        throw e;
      }
    }
    logFilterErrors(log, filterErrors);
    // Committed: announce at once (a listener's failure must not make the batch look unstored).
    try {
      if (mailboxIds.length > 0) deps.onStored?.(mailboxIds);
      deps.onVerdicts?.(verdicts);
    } catch (err) {
      log.warn({ err }, 'a listener of stored mail failed');
    }
    for (const id of b.picked) inFlight.delete(id);
    for (const f of b.failed) if (!f.final) retryAt.set(f.id, b.now + retryDelayMs(b.attempts.get(f.id) ?? 0));
    for (const p of b.prepared) retryAt.delete(p.id);
    // Messages that failed alone wait before their next try; the rest of the queue goes on meanwhile.
    for (const r of retry) retryAt.set(r.id, b.now + retryDelayMs(r.attempts - 1));
    if (forwarded > 0) deps.onForwardsQueued?.();
    queuedSmtp = Math.max(0, queuedSmtp - smtpDone);
    queuedApi = Math.max(0, queuedApi - b.apiIds.length);
    for (const name of unlink) await blobs.remove(blobs.rawFile(name));
  }

  /** Moves the oldest acceptance-journal records into the queue (one transaction, durable before the journal lets go of them). */
  async function moveJournal(): Promise<void> {
    const next = deps.journal.take(MOVE_ROWS, MOVE_BYTES);
    if (!next) return;
    const paths: Record<number, string> = {};
    for (const r of next.refs) paths[r.segment] ??= deps.journal.pathOf(r.segment);
    const { damaged } = await deps.thread.move({ paths, refs: next.refs, end: next.end });
    queuedSmtp += next.refs.length;
    for (const d of damaged) log.error({ journal_segment: d.segment, journal_offset: d.offset }, 'acceptance journal record damaged on disk; passed over');
    deps.journal.applied(next.end);
  }

  // Scheduling uses the process's monotonic time (not the injectable clock: it measures, it does not decide what is due).
  let lastAcceptAt = -Infinity;
  let lastApiAcceptAt = -Infinity;
  let busySince: number | null = null;
  let msPerRow = 0.5;
  /** SMTP rows in the queue not yet stored (with the journal's pending records: the backlog). */
  let queuedSmtp = 0;
  /** API rows in the queue not yet stored (counted by the backlog limit, backlog-limit.ts). */
  let queuedApi = 0;
  /** Wall time per row of batches of LOADED_BATCH_ROWS or more: how fast the pipeline drains a backlog. */
  let drainMsPerRow = DEFAULT_DRAIN_MS_PER_ROW;
  /**
   * The same with nothing arriving: how fast a backlog goes once a burst ends, so what decides how
   * soon after its last 250 the last message is listed (the in-flow delay's measure).
   */
  let idleDrainMsPerRow = DEFAULT_DRAIN_MS_PER_ROW;
  let counted: Promise<void> = Promise.resolve();
  /** What the loop awaits now (named in the stall warning). */
  let phase: 'idle' | 'move' | 'pick' | 'store' = 'idle';
  /** When a batch was last stored, or the backlog last seen empty (monotonic ms). */
  let progressAt = performance.now();
  let warnedAt = -Infinity;
  const backlogRows = () => deps.journal.pending + queuedSmtp;
  /**
   * The backlog in milliseconds of storage work at the idle-drain rate: what a burst leaves after
   * its last 250. Never estimated faster than DEFAULT_DRAIN_MS_PER_ROW: a small backlog into a small
   * database drains faster than what a long burst leaves (0.20 against 0.23-0.29 ms per row here),
   * and an estimate taken from the first let the next burst's last message be listed 5.4 s after
   * its 250 (docs/PERFORMANCE.md, "Storage pacing and the in-flow bound").
   */
  const idleBacklogMs = () => backlogRows() * Math.max(idleDrainMsPerRow, DEFAULT_DRAIN_MS_PER_ROW);
  const pause = (ms: number) => new Promise<void>((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));

  /**
   * Batches until the journal and the queue are empty, as a two-stage pipeline: the next batch is
   * picked and its raw mail parsed (parser threads) while the storage thread stores the previous
   * one and then moves the next journal records into the queue. (The move follows the store on the
   * storage thread: were it awaited before parsing, as it once was, parsing would wait for the
   * store, and the two stages would take turns instead of running together.) While mail is
   * arriving the acknowledgements come first (pace.ts): batches of about BUSY_BATCH_MS, each
   * followed by a pause of BUSY_PAUSE_RATIO times as long, so storage leaves the cores to accepting
   * and the queue absorbs the burst, for up to MAX_BURST_MS and while the backlog is under
   * MAX_BACKLOG_MS; past either, batches run back to back, as they do when nothing arrives. The
   * storage thread runs at low priority (src/threads/priority.ts); the parser thread does not.
   */
  async function loop(): Promise<void> {
    /** A batch picked and not yet handed to storage: should the loop end first, its rows are let go. */
    let unstored: Ready | null = null;
    try {
      await counted;
      do {
        again = false;
        while (!stopped) {
          const backlogMs = backlogRows() * drainMsPerRow;
          const step = pace({ now: performance.now(), lastAcceptAt, lastApiAcceptAt, busySince, msPerRow, backlogMs });
          busySince = step.busySince;
          const { rows, yielding } = step;
          const arriving = step.busySince !== null;
          // Nothing under way on the storage thread (the first turn, or after an empty one): move now.
          phase = 'move';
          if (!storing) await moveJournal();
          const prepareStarted = performance.now();
          phase = 'pick';
          const next = await prepareBatch(rows);
          const prepareMs = performance.now() - prepareStarted;
          unstored = next;
          // Stopping while parses ran: the rows stay queued for the next start.
          if (stopped) break;
          const stored = storing !== null;
          phase = 'store';
          if (storing) await storing;
          storing = null;
          if (!next) {
            // The store just awaited moved records the pick could not see yet: look again.
            if (stored || deps.journal.pending > 0) continue;
            break;
          }
          const started = performance.now();
          unstored = null;
          storing = storeBatch(next).then(async () => {
            const took = performance.now() - started;
            progressAt = performance.now();
            msPerRow = 0.8 * msPerRow + 0.2 * (took / next.picked.length);
            // Parsing and storing overlap, so the slower of the two sets the pace of a drain. Small
            // batches carry a batch's fixed costs, so only batches of the sizes that drain measure.
            if (!yielding && next.picked.length >= LOADED_BATCH_ROWS) {
              const perRow = Math.max(prepareMs, took) / next.picked.length;
              drainMsPerRow = 0.8 * drainMsPerRow + 0.2 * perRow;
              if (!arriving) idleDrainMsPerRow = 0.8 * idleDrainMsPerRow + 0.2 * perRow;
            }
            await moveJournal();
            if (yielding) await pause(Math.min(MAX_PAUSE_MS, BUSY_PAUSE_RATIO * took));
          });
          // Awaited at the next turn (or in `finally`), but it may fail first, while the next batch
          // is being parsed: with nothing waiting on it then, node ended the process for the
          // rejection (test/ingest/move-failure.test.ts). The await still sees the failure.
          storing.catch(() => undefined);
        }
        if (storing) await storing;
        storing = null;
      } while (again && !stopped);
    } catch (err) {
      log.error({ err }, 'ingest batch failed; will retry');
    } finally {
      // A failed batch's partner may still be storing: wait for it before the loop can start again.
      if (storing) await (storing as Promise<void>).catch(() => undefined);
      // A batch picked and never stored (the previous store failed, or stopping): its rows stay
      // queued and must be picked again, not held as in flight until the next start.
      release(unstored?.picked ?? []);
      storing = null;
      running = false;
      phase = 'idle';
    }
  }

  /**
   * Says so, at most every STALL_WARN_MS, when mail waits and nothing was stored for that long: a
   * stuck storage thread, parser or database lock would otherwise show only as mail not listed.
   */
  function checkProgress(): void {
    const now = performance.now();
    if (backlogRows() === 0) { progressAt = now; return; }
    if (now - progressAt < STALL_WARN_MS || now - warnedAt < STALL_WARN_MS) return;
    warnedAt = now;
    log.warn({ backlog: backlogRows(), stalled_ms: Math.round(now - progressAt), phase, running }, 'ingest has stored nothing for a while with mail waiting');
  }

  function wake(): void {
    if (stopped) return;
    if (running) { again = true; return; }
    running = true;
    setImmediate(() => void loop());
  }

  return {
    /** Looks for queued rows now. */
    wake,
    /** Told after each acceptance (an API group commit of `apiRows` messages, or SMTP mail journaled): wakes the worker and marks the acceptor busy. */
    accepted(kind: 'api' | 'smtp', apiRows = 0) {
      queuedApi += apiRows;
      lastAcceptAt = performance.now();
      if (kind === 'api') lastApiAcceptAt = lastAcceptAt;
      wake();
    },
    /** How long to hold the next SMTP acknowledgement back: storage is far behind (pace.ts `inflowDelayMs`). */
    inflowDelayMs: () => inflowDelayMs(idleBacklogMs()),
    /** SMTP mail accepted and not yet stored, and the estimated time to store it with nothing else arriving (metrics). */
    backlog: () => ({ messages: backlogRows(), seconds: idleBacklogMs() / 1000 }),
    /** Every message accepted and not yet stored (API mail too), and the storage time per row measured (the backlog limit's reading). */
    limitReading: () => ({ messages: backlogRows() + queuedApi, msPerRow: Math.max(drainMsPerRow, idleDrainMsPerRow, DEFAULT_DRAIN_MS_PER_ROW) }),
    /** Starts working, beginning with whatever a previous run left queued. */
    start() {
      stopped = false;
      // Counted before the loop's first move (it awaits this), so no moved row is counted twice.
      counted = Promise.all([store.countQueuedSmtp(db), store.countQueuedApi(db)])
        .then(([smtp, api]) => { queuedSmtp = smtp; queuedApi = api; }, (err) => log.warn({ err }, 'could not count queued mail'));
      timer = setInterval(() => { wake(); checkProgress(); }, POLL_MS);
      timer.unref();
      wake();
    },
    /**
     * Stops taking batches and waits for a batch transaction under way; a batch still parsing
     * (authentication may wait on DNS for seconds) is abandoned, its rows stay queued.
     */
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      if (storing) await (storing as Promise<void>).catch(() => undefined);
    },
  };
}
export type IngestWorker = ReturnType<typeof createIngestWorker>;
