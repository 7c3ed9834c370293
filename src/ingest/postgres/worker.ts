import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connection.js';
import type { Markers } from '../../mailstore/markers.js';
import type { EmailWriter } from '../../mailstore/writer.js';
import type { Logger } from '../../logger.js';
import { createEventRecorder, type QueuedHint } from '../../webhooks/events.js';
import type { BlobStore } from '../blobs.js';
import type { Failure, ParsedRaw } from '../../mailstore/commits.js';
import { deliverBatch } from '../../mailstore/pipeline.js';
import { logFilterErrors } from '../../sieve-store/filter.js';
import { decodeMessage } from '../../inbound/encoded-message.js';
import type { Envelope, Target } from '../../inbound/message.js';
import { lockMailboxes } from './accept.js';
import { pgBlobs, type BlobData } from './blobs.js';
import type { IngestStore } from '../../mailstore/inbound-store.js';
import type { RawParser } from '../../inbound/types.js';
import { BUSY_WINDOW_MS, DEFAULT_DRAIN_MS_PER_ROW, MAX_BACKLOG_MS, MAX_BURST_MS } from '../pace.js';
import { BATCH_BYTES } from '../worker.js';
import { createBlame, storeApart } from '../isolate.js';
import { screeningOf } from '../../spam/screening.js';
import type { VerdictCounts } from '../../spam/filing.js';
import { spamClassifyStep } from '../../spam/filing.js';
import type { SpamFilterMode } from '../../spam/settings.js';
import { defaultSteps } from '../../mailstore/pipeline.js';
import { MAX_ATTEMPTS, noteFailure, retryDelayMs, type FailureNote } from '../../mailstore/set-aside.js';

/**
 * Rows per batch transaction. A PostgreSQL batch costs some twenty statements whatever its size,
 * so storing pays per transaction far more than per row: the larger the batch the less CPU per
 * message (the SQLite pacing of pace.ts keeps its batches small instead, for API acknowledgements
 * that wait behind them in the storage thread; here they never wait behind a batch).
 */
const BATCH_ROWS = 128;
/**
 * While mail arrives (and for at most MAX_BURST_MS, with a backlog under MAX_BACKLOG_MS of work),
 * the worker waits this long before each batch: storing runs on the thread that accepts, so it
 * yields the CPU to acknowledgements and stores what gathered meanwhile in one transaction.
 */
const BUSY_PAUSE_MS = 100;
/** How often a node looks for rows other nodes accepted (its own commits wake it at once). */
const POLL_MS = 500;
/** Pause after a failed batch before the next try. */
const FAILURE_PAUSE_MS = 1000;

type QueuedRow = { id: number; kind: 'api' | 'smtp'; size: number; attempts: number };

/**
 * The storing half of ingestion on PostgreSQL. Each batch is ONE transaction: it claims the oldest
 * queued rows with `FOR UPDATE SKIP LOCKED` (so any number of nodes drain one queue, each row
 * taken by one of them), parses the raw SMTP ones with the registered parser, moves the
 * attachments the parser wrote to this node's scratch files into the `blobs` table, and stores the
 * copies, events, quota usage and forwards through the same deliverBatch as SQLite (mailstore/pipeline.ts),
 * marking the rows stored. Should the node die at any point the transaction rolls back, its row
 * locks go with the connection, and the rows are still queued for whichever node looks next: every
 * acknowledged message is stored exactly once.
 */
export function createPgIngestWorker(deps: {
  db: Db; store: IngestStore; writer: EmailWriter; markers: Markers; files: BlobStore; clock: Clock; logger: Logger;
  parser: () => RawParser | null;
  /** Webhook deliveries queued by a committed batch (the delivery engine's hint). */
  onHints(hints: QueuedHint[]): void;
  onForwardsQueued(): void;
  onStored?: (mailboxIds: number[]) => void;
  /** Told after a stored batch of the spam verdicts its copies got (/metrics). */
  onVerdicts?: (v: VerdictCounts) => void;
  /** MAILSTEAD_SPAM_FILTER: the pipeline's classify step (src/spam/filing.ts). */
  spamFilter?: SpamFilterMode;
}) {
  const { db, store, writer, files, clock, logger } = deps;
  const log = logger.child({ component: 'ingest' });
  const steps = { ...defaultSteps, classify: spamClassifyStep(deps.spamFilter ?? 'builtin') };
  const retryAt = new Map<number, number>();
  let stopped = true;
  let running: Promise<void> | null = null;
  let again = false;
  let timer: NodeJS.Timeout | null = null;
  /** Resolves when stop() is called: a batch still parsing then gives up (its transaction rolls back, its rows stay queued). */
  let stopping: Promise<never> = new Promise(() => undefined);
  let signalStop: () => void = () => undefined;
  /** SMTP rows queued and not yet stored (all nodes'), counted at each poll: the backlog gauges. */
  let queuedSmtp = 0;
  /** API rows queued and not yet stored (all nodes'), counted at each poll: the backlog limit counts them too. */
  let queuedApi = 0;
  /** Wall time per stored row of recent batches (the backlog's estimate in seconds). */
  let msPerRow = DEFAULT_DRAIN_MS_PER_ROW;
  // Monotonic times (performance.now()) of the last commit of accepted mail here, and of the start of the current stretch of them.
  let lastAcceptAt = -Infinity;
  let busySince: number | null = null;

  /** Whether to hold the next batch back for arriving mail (see BUSY_PAUSE_MS). */
  function yielding(): boolean {
    const now = performance.now();
    const busy = now - lastAcceptAt < BUSY_WINDOW_MS;
    busySince = busy ? busySince ?? now : null;
    return busy && now - busySince! < MAX_BURST_MS && queuedSmtp * msPerRow < MAX_BACKLOG_MS;
  }

  /** Parses one raw SMTP row (the parser writes its attachments as this node's blob files). */
  async function parse(row: { id: number; message: string; targets: string; raw: Buffer | null; size: number }): Promise<ParsedRaw> {
    const targets = JSON.parse(row.targets) as Target[];
    const { recipients: _addresses, ...envelope } = JSON.parse(row.message) as Envelope;
    const recipients = targets.map((t) => ({ address: t.address, resolution: { kind: 'deliver' as const, tenantId: t.tenantId, mailboxIds: t.mailboxIds, forwards: t.forwards } }));
    if (!row.raw) throw new Error(`inbound row ${row.id} has no raw bytes`);
    const encoded = await deps.parser()!(row.raw, { ...envelope, recipients });
    return { id: row.id, targets, encoded, mailFrom: envelope.mailFrom, size: row.size, screening: screeningOf(envelope), rawPath: null };
  }

  /** Whether a split whose every message fails counts them (isolate.ts). */
  const blame = createBlame();
  /** The rows the last batch claimed, and its parses (a failed batch is stored again message by message: storeApartBatch). */
  let lastClaimed: number[] = [];
  let lastParsed = new Map<number, ParsedRaw>();

  /**
   * Claims, parses and stores one batch (of the rows `only` when given); returns how many rows it
   * took (0: nothing to do). Rows in `parsed` are not parsed again: a failed batch's parses (and
   * the attachment files they wrote, removed only after a commit) serve its messages stored alone.
   */
  async function batch(only?: number[], parsed?: Map<number, ParsedRaw>): Promise<number> {
    lastClaimed = [];
    lastParsed = new Map();
    const now = clock.now();
    const hints: QueuedHint[] = [];
    const events = createEventRecorder({ clock, onQueued: (h) => { hints.push(...h); } });
    const moved = new Set<string>();
    let result: Awaited<ReturnType<typeof deliverBatch>> | null = null;
    let taken = 0;
    let tookApi = 0;
    const storedIds: number[] = [];
    await db.transaction().execute(async (trx) => {
      const hasParser = deps.parser() !== null;
      // Rows whose parse failed wait for their retry (backing off) without holding back the rows after them.
      const waiting = [...retryAt].filter(([, at]) => at > now).map(([id]) => id);
      const claimed = await sql<QueuedRow>`SELECT id, kind, size, attempts FROM inbound
        WHERE status = 'queued' ${hasParser ? sql`` : sql`AND kind = 'api'`} AND NOT (id = ANY(${waiting}::bigint[]))
        ${only ? sql`AND id = ANY(${only}::bigint[])` : sql``}
        ORDER BY id LIMIT ${BATCH_ROWS} FOR UPDATE SKIP LOCKED`.execute(trx);
      const picked: QueuedRow[] = [];
      let bytes = 0;
      for (const r of claimed.rows) {
        if (picked.length > 0 && bytes + r.size > BATCH_BYTES) break;
        picked.push(r);
        bytes += r.size;
      }
      taken = picked.length;
      lastClaimed = picked.map((r) => r.id);
      if (picked.length === 0) return;
      const apiIds = picked.filter((r) => r.kind === 'api').map((r) => r.id);
      const smtpIds = picked.filter((r) => r.kind === 'smtp').map((r) => r.id);
      tookApi = apiIds.length;
      const rows = smtpIds.length === 0 ? [] : await store.load(trx, smtpIds);
      const attempts = new Map(picked.map((r) => [r.id, r.attempts]));
      const failed: Failure[] = [];
      const failure = (id: number, err: unknown) => {
        const final = (attempts.get(id) ?? 0) + 1 >= MAX_ATTEMPTS;
        failed.push({ id, error: (err as Error)?.message ?? String(err), final });
        if (!final) retryAt.set(id, now + retryDelayMs(attempts.get(id) ?? 0));
        log.warn({ err, inbound_id: id, final }, 'inbound message could not be prepared');
      };
      // Stopping while parsing (authentication may wait on DNS for seconds): the batch is abandoned
      // and rolls back, and parses cut off by the closing parser are no failures of their messages.
      const results = await Promise.race([
        Promise.all(rows.map((row) => parsed?.get(row.id) ?? parse(row).catch((err) => { if (!stopped) failure(row.id, err); return null; }))),
        stopping,
      ]);
      for (const p of results) if (p) lastParsed.set(p.id, p);
      // Locks in the order every writer of mail takes them, so none waits on another in a cycle: the
      // update-marker row first (markers.ts; the writer takes its markers under it), then blob rows,
      // then the mailbox rows deliverBatch updates, in id order (see lockMailboxes). Parsing is done
      // by now: no other writer waits on the marker while a message is parsed.
      await deps.markers.ready(trx);
      const prepared: ParsedRaw[] = [];
      for (const p of results) {
        if (!p) continue;
        // The parser made the attachments files of this node; the database is where every node reads them.
        try {
          const hashes = decodeMessage(p.encoded).attachments.map((a) => a.sha256);
          const present = await pgBlobs.touch(trx, [...new Set(hashes)], now);
          const blobs: BlobData[] = [];
          for (const sha256 of new Set(hashes)) if (!present.has(sha256)) blobs.push({ sha256, data: await files.readBlob(sha256) });
          await pgBlobs.save(trx, blobs, now);
          for (const b of blobs) moved.add(b.sha256);
          prepared.push(p);
        } catch (err) {
          failure(p.id, err);
        }
      }
      const boxes = [...prepared.flatMap((p) => p.targets), ...(await store.load(trx, apiIds)).flatMap((r) => JSON.parse(r.targets) as Target[])]
        .flatMap((t) => t.mailboxIds);
      await lockMailboxes(trx, boxes);
      result = await deliverBatch(trx, { store, writer, events, steps, readRawFile: (name) => readFile(files.rawFile(name)) }, { apiIds, prepared, failed }, now);
      storedIds.push(...prepared.map((p) => p.id), ...failed.filter((f) => f.final).map((f) => f.id));
    });
    if (taken === 0) return 0;
    blame.stored();
    // Counted down here and recounted at each poll: a count per batch would read the whole backlog's
    // index entries once per batch, a cost that grows with the backlog (issue 47).
    queuedApi = Math.max(0, queuedApi - tookApi);
    queuedSmtp = Math.max(0, queuedSmtp - (taken - tookApi));
    for (const id of storedIds) retryAt.delete(id);
    // Committed. The scratch files moved into the table go (a later parse of the same content writes its own).
    for (const sha256 of moved) await files.remove(files.blobPath(sha256));
    const r = result as Awaited<ReturnType<typeof deliverBatch>> | null;
    // The recorder reports hints on the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    if (hints.length > 0) deps.onHints(hints);
    if (r) {
      logFilterErrors(log, r.filterErrors);
      try {
        if (r.mailboxIds.length > 0) deps.onStored?.(r.mailboxIds);
        deps.onVerdicts?.(r.verdicts);
      } catch (err) {
        log.warn({ err }, 'a listener of stored mail failed');
      }
      if (r.forwarded > 0) deps.onForwardsQueued();
    }
    return taken;
  }

  /**
   * Counts a failed try at a message stored alone, in a transaction of its own that holds the row
   * (a row another node holds now is its business: nothing is counted).
   */
  async function note(id: number, reason: string): Promise<FailureNote> {
    const now = clock.now();
    const noted = await db.transaction().execute(async (trx) => {
      const held = await sql<{ id: number }>`SELECT id FROM inbound WHERE id = ${id} AND status = 'queued' FOR UPDATE SKIP LOCKED`.execute(trx);
      if (held.rows.length === 0) return { outcome: 'gone' as const, attempts: 0, forwarded: 0 };
      return noteFailure(trx, store, id, reason, now);
    });
    if (noted.outcome === 'retry') retryAt.set(id, now + retryDelayMs(noted.attempts - 1));
    if (noted.outcome === 'set-aside') { retryAt.delete(id); void count(); }
    if (noted.forwarded > 0) deps.onForwardsQueued();
    return noted;
  }

  /** A batch that failed, stored again in parts (isolate.ts); false when nothing was stored or counted (the fault is not the messages'). */
  async function storeApartBatch(ids: number[], parsed: Map<number, ParsedRaw>): Promise<boolean> {
    const apart = await storeApart(ids.map((id) => ({ id, input: id })), {
      store: async (part) => ((await batch(part, parsed)) > 0 ? part : null), note, blame, stopping: () => stopped, log,
    });
    // Deferred messages wait as long as a first retry, uncounted.
    for (const id of apart.deferred) retryAt.set(id, clock.now() + retryDelayMs(0));
    return apart.stored.length > 0 || apart.failed.length > 0;
  }

  /** Counts the SMTP rows waiting (for the backlog gauges; the storing needs no count). */
  async function count(): Promise<void> {
    [queuedSmtp, queuedApi] = await Promise.all([store.countQueuedSmtp(db), store.countQueuedApi(db)]).catch(() => [queuedSmtp, queuedApi]);
  }

  async function loop(): Promise<void> {
    try {
      do {
        again = false;
        while (!stopped) {
          try {
            if (yielding()) await Promise.race([new Promise((r) => setTimeout(r, BUSY_PAUSE_MS)), stopping.catch(() => undefined)]);
            if (stopped) break;
            const started = performance.now();
            const taken = await batch();
            if (taken === 0) break;
            msPerRow = 0.8 * msPerRow + 0.2 * ((performance.now() - started) / taken);
          } catch (err) {
            if (stopped) break;
            // Nothing of a failed batch committed: its messages are stored again one by one, so a
            // message that cannot be stored holds none of the others back (isolate.ts). A parse
            // failure is no batch failure: it is counted against its message inside the batch.
            const claimed = lastClaimed;
            const parsed = lastParsed;
            try {
              if (claimed.length === 0) throw err;
              log.warn({ reason: (err as Error)?.message, rows: claimed.length }, 'ingest batch failed; storing it in parts');
              if (!(await storeApartBatch(claimed, parsed))) throw err;
            } catch (fault) {
              if (stopped) break;
              // Every message failed and none was counted (the database's fault, isolate.ts): they
              // wait a while, so they neither spin nor hold back mail that arrives meanwhile.
              for (const id of claimed) retryAt.set(id, clock.now() + retryDelayMs(0));
              log.error({ err: fault }, 'ingest batch failed; will retry');
              await new Promise((r) => setTimeout(r, FAILURE_PAUSE_MS));
            }
          }
        }
      } while (again && !stopped);
    } finally {
      running = null;
    }
  }

  function wake(): void {
    if (stopped) return;
    if (running) { again = true; return; }
    running = loop();
  }

  return {
    wake,
    /** Told after this node committed a group: `smtp` and `api` more rows wait (counted at once). */
    accepted(smtp: number, api = 0): void {
      queuedSmtp += smtp;
      queuedApi += api;
      lastAcceptAt = performance.now();
      wake();
    },
    /** SMTP mail acknowledged and not yet stored, and the estimated time to store it (metrics). */
    backlog: () => ({ messages: queuedSmtp, seconds: (queuedSmtp * msPerRow) / 1000 }),
    /** Every message accepted and not yet stored (API mail too), and the storage time per row measured (the backlog limit's reading). */
    limitReading: () => ({ messages: queuedSmtp + queuedApi, msPerRow: Math.max(msPerRow, DEFAULT_DRAIN_MS_PER_ROW) }),
    /** Starts draining the queue (what a previous run or another node left included), and polls for other nodes' rows. */
    start(): void {
      stopped = false;
      stopping = new Promise<never>((_resolve, reject) => { signalStop = () => reject(new Error('ingest stopping')); });
      stopping.catch(() => undefined);
      timer = setInterval(() => { wake(); void count(); }, POLL_MS);
      timer.unref();
      wake();
    },
    /** Stops taking batches and waits for the one under way (its transaction commits or rolls back). */
    async stop(): Promise<void> {
      stopped = true;
      signalStop();
      if (timer) clearInterval(timer);
      if (running) await running;
    },
  };
}
export type PgIngestWorker = ReturnType<typeof createPgIngestWorker>;
