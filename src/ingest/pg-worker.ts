import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { EmailWriter } from '../emails/writer.js';
import type { Logger } from '../logger.js';
import { createEventRecorder, type QueuedHint } from '../webhooks/events.js';
import type { BlobStore } from './blobs.js';
import { storeBatch, type Failure, type ParsedRaw } from './commits.js';
import { decodeMessage } from './encoded-message.js';
import type { Envelope, Target } from './message.js';
import { lockMailboxes } from './pg-accept.js';
import { pgBlobs, type BlobData } from './pg-blobs.js';
import type { IngestStore } from './store.js';
import type { RawParser } from './types.js';
import { BATCH_BYTES, MAX_ATTEMPTS } from './worker.js';

/** Rows per batch transaction. */
const BATCH_ROWS = 64;
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
 * copies, events, quota usage and forwards through the same storeBatch as SQLite (commits.ts),
 * marking the rows stored. Should the node die at any point the transaction rolls back, its row
 * locks go with the connection, and the rows are still queued for whichever node looks next: every
 * acknowledged message is stored exactly once.
 */
export function createPgIngestWorker(deps: {
  db: Db; store: IngestStore; writer: EmailWriter; files: BlobStore; clock: Clock; logger: Logger;
  parser: () => RawParser | null;
  /** Webhook deliveries queued by a committed batch (the delivery engine's hint). */
  onHints(hints: QueuedHint[]): void;
  onForwardsQueued(): void;
  onStored?: (mailboxIds: number[]) => void;
}) {
  const { db, store, writer, files, clock, logger } = deps;
  const log = logger.child({ component: 'ingest' });
  const retryAt = new Map<number, number>();
  let stopped = true;
  let running: Promise<void> | null = null;
  let again = false;
  let timer: NodeJS.Timeout | null = null;
  /** After a failed batch, rows are taken one at a time until one stores (a poison row fails alone). */
  let single = false;

  /** Parses one raw SMTP row (the parser writes its attachments as this node's blob files). */
  async function parse(row: { id: number; message: string; targets: string; raw: Buffer | null; size: number }): Promise<ParsedRaw> {
    const targets = JSON.parse(row.targets) as Target[];
    const { recipients: _addresses, ...envelope } = JSON.parse(row.message) as Envelope;
    const recipients = targets.map((t) => ({ address: t.address, resolution: { kind: 'deliver' as const, tenantId: t.tenantId, mailboxIds: t.mailboxIds, forwards: t.forwards } }));
    if (!row.raw) throw new Error(`inbound row ${row.id} has no raw bytes`);
    const encoded = await deps.parser()!(row.raw, { ...envelope, recipients });
    return { id: row.id, targets, encoded, mailFrom: envelope.mailFrom, size: row.size, rawPath: null };
  }

  /** Claims, parses and stores one batch; returns how many rows it took (0: nothing to do). */
  async function batch(claimedIds: number[]): Promise<number> {
    const now = clock.now();
    const hints: QueuedHint[] = [];
    const events = createEventRecorder({ clock, onQueued: (h) => { hints.push(...h); } });
    const moved = new Set<string>();
    let result: Awaited<ReturnType<typeof storeBatch>> | null = null;
    let taken = 0;
    await db.transaction().execute(async (trx) => {
      const hasParser = deps.parser() !== null;
      const claimed = await sql<QueuedRow>`SELECT id, kind, size, attempts FROM inbound
        WHERE status = 'queued' ${hasParser ? sql`` : sql`AND kind = 'api'`}
        ORDER BY id LIMIT ${single ? 1 : BATCH_ROWS} FOR UPDATE SKIP LOCKED`.execute(trx);
      const picked: QueuedRow[] = [];
      let bytes = 0;
      for (const r of claimed.rows) {
        if ((retryAt.get(r.id) ?? 0) > now) continue;
        if (picked.length > 0 && bytes + r.size > BATCH_BYTES) break;
        picked.push(r);
        bytes += r.size;
      }
      taken = picked.length;
      claimedIds.push(...picked.map((r) => r.id));
      if (picked.length === 0) return;
      const apiIds = picked.filter((r) => r.kind === 'api').map((r) => r.id);
      const smtpIds = picked.filter((r) => r.kind === 'smtp').map((r) => r.id);
      const rows = smtpIds.length === 0 ? [] : await store.load(trx, smtpIds);
      const attempts = new Map(picked.map((r) => [r.id, r.attempts]));
      const failed: Failure[] = [];
      const failure = (id: number, err: unknown) => {
        const final = (attempts.get(id) ?? 0) + 1 >= MAX_ATTEMPTS;
        failed.push({ id, error: (err as Error)?.message ?? String(err), final });
        if (!final) retryAt.set(id, now + 5000 * 2 ** (attempts.get(id) ?? 0));
        log.warn({ err, inbound_id: id, final }, 'inbound message could not be prepared');
      };
      const parsed = await Promise.all(rows.map((row) => parse(row).catch((err) => { failure(row.id, err); return null; })));
      const prepared: ParsedRaw[] = [];
      for (const p of parsed) {
        if (!p) continue;
        // The parser made the attachments files of this node; the database is where every node reads them.
        try {
          const hashes = decodeMessage(p.encoded).attachments.map((a) => a.sha256);
          const present = await pgBlobs.present(trx, hashes);
          const blobs: BlobData[] = [];
          for (const sha256 of new Set(hashes)) if (!present.has(sha256)) blobs.push({ sha256, data: await files.readBlob(sha256) });
          await pgBlobs.save(trx, blobs, now);
          for (const b of blobs) moved.add(b.sha256);
          prepared.push(p);
        } catch (err) {
          failure(p.id, err);
        }
      }
      // Mailbox rows in id order before storeBatch updates them (see lockMailboxes).
      const boxes = [...prepared.flatMap((p) => p.targets), ...(await store.load(trx, apiIds)).flatMap((r) => JSON.parse(r.targets) as Target[])]
        .flatMap((t) => t.mailboxIds);
      await lockMailboxes(trx, boxes);
      result = await storeBatch(trx, { store, writer, events }, { apiIds, prepared, failed }, now);
    });
    if (taken === 0) return 0;
    // Committed. The scratch files moved into the table go (a later parse of the same content writes its own).
    for (const sha256 of moved) await files.remove(files.blobPath(sha256));
    const r = result as Awaited<ReturnType<typeof storeBatch>> | null;
    // The recorder reports hints on the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    if (hints.length > 0) deps.onHints(hints);
    if (r) {
      try {
        if (r.mailboxIds.length > 0) deps.onStored?.(r.mailboxIds);
      } catch (err) {
        log.warn({ err }, 'a listener of stored mail failed');
      }
      if (r.forwarded > 0) deps.onForwardsQueued();
    }
    return taken;
  }

  /** A row that failed every batch it was in, alone: counted as a failed attempt (given up after MAX_ATTEMPTS). */
  async function countFailure(id: number, err: unknown): Promise<void> {
    const message = (err as Error)?.message ?? String(err);
    await db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('inbound').select(['attempts', 'status']).where('id', '=', id).forUpdate().executeTakeFirst();
      if (!row || row.status !== 'queued') return;
      if (row.attempts + 1 >= MAX_ATTEMPTS) await store.fail(trx, id, message, clock.now());
      else await store.bumpAttempts(trx, id, message);
    }).catch((e) => log.warn({ err: e, inbound_id: id }, 'could not count a failed attempt'));
    retryAt.set(id, clock.now() + FAILURE_PAUSE_MS * 5);
  }

  async function loop(): Promise<void> {
    try {
      do {
        again = false;
        while (!stopped) {
          const ids: number[] = [];
          try {
            if ((await batch(ids)) === 0) break;
            single = false;
          } catch (err) {
            if (stopped) break;
            log.error({ err, rows: ids.length }, 'ingest batch failed; will retry');
            if (single && ids.length === 1) { await countFailure(ids[0], err); single = false; }
            else single = true;
            await new Promise((r) => setTimeout(r, FAILURE_PAUSE_MS));
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
    /** Starts draining the queue (what a previous run or another node left included), and polls for other nodes' rows. */
    start(): void {
      stopped = false;
      timer = setInterval(wake, POLL_MS);
      timer.unref();
      wake();
    },
    /** Stops taking batches and waits for the one under way (its transaction commits or rolls back). */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      if (running) await running;
    },
  };
}
export type PgIngestWorker = ReturnType<typeof createPgIngestWorker>;
