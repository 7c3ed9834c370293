import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Copy, EmailWriter } from '../emails/writer.js';
import type { Logger } from '../logger.js';
import type { EmailEvent, EventRecorder } from '../webhooks/events.js';
import type { BlobStore } from './blobs.js';
import type { Envelope, StoredMessage, Target } from './message.js';
import type { IngestStore } from './store.js';
import type { RawParser } from './types.js';

/** Rows per batch transaction: large enough to share the FTS5 and commit cost, small enough to keep the connection free for readers. */
export const BATCH_ROWS = 64;
/** Bytes of queued messages per batch (raw rows are loaded whole). */
export const BATCH_BYTES = 8 * 1024 * 1024;
/** Parse attempts before a raw message is given up as failed. */
export const MAX_ATTEMPTS = 3;
const POLL_MS = 1000;

type Prepared = { id: number; kind: 'api' | 'smtp'; targets: Target[]; message: StoredMessage; mailFrom: string | null; size: number };

/**
 * The ingest processor: takes queued inbound rows in batches, parses raw SMTP mail with the
 * registered parser (outside any transaction; attachment blobs fsynced first), then in ONE
 * transaction per batch stores a copy per destination mailbox with its index entries, records
 * `email.received` events, queues forwards and marks the rows done. A crash rolls the batch back
 * and the rows are still queued at the next start, so every accepted message is stored once.
 */
export function createIngestWorker(deps: {
  db: Db; store: IngestStore; blobs: BlobStore; writer: EmailWriter; events: EventRecorder;
  clock: Clock; logger: Logger; parser: () => RawParser | null;
}) {
  const { db, store, blobs, writer, events, clock, logger } = deps;
  const log = logger.child({ component: 'ingest' });
  const retryAt = new Map<number, number>();
  let running = false;
  let again = false;
  let stopped = true;
  let timer: NodeJS.Timeout | null = null;
  let idleWaiters: Array<() => void> = [];

  async function prepare(row: Awaited<ReturnType<IngestStore['load']>>[number]): Promise<Prepared> {
    const targets = JSON.parse(row.targets) as Target[];
    if (row.kind === 'api') {
      const message = JSON.parse(row.message) as StoredMessage;
      return { id: row.id, kind: 'api', targets, message, mailFrom: message.fromEmail, size: row.size };
    }
    const envelope = JSON.parse(row.message) as Envelope;
    const parse = deps.parser()!;
    const { recipients: _r, ...rest } = envelope;
    const delivery = { ...rest, recipients: [] as never[] };
    const parsed = await parse(row.raw ?? { path: row.raw_path! }, delivery);
    const attachments = await Promise.all(parsed.attachments.map(async (a) => ({
      filename: a.filename, contentType: a.contentType, size: a.content.length, sha256: await blobs.putBlob(a.content),
      contentId: a.contentId ?? null, disposition: a.disposition ?? 'attachment',
    })));
    return { id: row.id, kind: 'smtp', targets, message: { ...parsed, attachments }, mailFrom: envelope.mailFrom, size: row.size };
  }

  /** Stores one batch; returns how many rows it took off the queue (0 when nothing is ready). */
  async function batch(): Promise<number> {
    const now = clock.now();
    const hasParser = deps.parser() !== null;
    const ready = (await store.queued(db, BATCH_ROWS * 4))
      .filter((r) => (r.kind === 'api' || hasParser) && (retryAt.get(r.id) ?? 0) <= now);
    const picked: number[] = [];
    let bytes = 0;
    for (const r of ready) {
      if (picked.length >= BATCH_ROWS || (picked.length > 0 && bytes + r.size > BATCH_BYTES)) break;
      picked.push(r.id);
      bytes += r.size;
    }
    if (picked.length === 0) return 0;
    const rows = await store.load(db, picked);
    const prepared: Prepared[] = [];
    const failed: Array<{ id: number; error: string; final: boolean }> = [];
    for (const row of rows) {
      try {
        prepared.push(await prepare(row));
      } catch (err) {
        const final = row.attempts + 1 >= MAX_ATTEMPTS;
        failed.push({ id: row.id, error: (err as Error)?.message ?? String(err), final });
        log.warn({ err, inbound_id: row.id, final }, 'inbound message could not be prepared');
      }
    }
    const unlink: string[] = [];
    await db.transaction().execute(async (trx) => {
      const owners = await store.mailboxOwners(trx, [...new Set(prepared.flatMap((p) => p.targets.flatMap((t) => t.mailboxIds)))]);
      const copies: Copy[] = [];
      for (const p of prepared) {
        const seen = new Set<number>();
        for (const t of p.targets) {
          for (const mailboxId of t.mailboxIds) {
            // A mailbox deleted since acceptance gets nothing; one reached twice gets one copy.
            if (owners.get(mailboxId) !== t.tenantId || seen.has(mailboxId)) continue;
            seen.add(mailboxId);
            copies.push({ tenantId: t.tenantId, mailboxId, inboundId: p.kind === 'smtp' ? p.id : null, toEmail: t.address, size: p.size, message: p.message });
          }
        }
      }
      const created = await writer.storeCopies(trx, copies);
      const used = new Map<number, number>();
      for (const c of created) if (c.inboundId !== null) used.set(c.mailboxId, (used.get(c.mailboxId) ?? 0) + c.size);
      for (const [id, delta] of used) await store.addUsedBytes(trx, id, delta);
      await events.record(trx, created.map((c): EmailEvent => ({ tenantId: c.tenantId, type: 'email.received', emailId: c.id, mailboxId: c.mailboxId })));
      const referenced = new Set(created.map((c) => c.inboundId));
      const done: Array<{ id: number; keep: boolean }> = [];
      for (const p of prepared) {
        const forwards = p.targets.flatMap((t) => t.forwards.map((address) => ({ tenantId: t.tenantId, address })));
        await store.insertForwards(trx, forwards.map((f) => ({
          tenant_id: f.tenantId, inbound_id: p.id, mail_from: p.mailFrom, address: f.address,
          next_attempt_at: now, last_error: null, created_at: now,
        })));
        const keep = forwards.length > 0 || referenced.has(p.id);
        done.push({ id: p.id, keep });
        if (!keep && p.kind === 'smtp') {
          const row = rows.find((r) => r.id === p.id);
          if (row?.raw_path) unlink.push(row.raw_path);
        }
      }
      await store.finish(trx, done, now);
      for (const f of failed) {
        if (f.final) await store.fail(trx, f.id, f.error, now);
        else await store.bumpAttempts(trx, f.id, f.error);
      }
    });
    for (const f of failed) if (!f.final) retryAt.set(f.id, now + 5000 * 2 ** (rows.find((r) => r.id === f.id)?.attempts ?? 0));
    for (const p of prepared) retryAt.delete(p.id);
    for (const path of unlink) await blobs.remove(path);
    return rows.length;
  }

  // Each batch is followed by a turn of the event loop, so HTTP and SMTP are served between batches.
  const yieldToIo = () => new Promise<void>((r) => setImmediate(r));

  async function loop(): Promise<void> {
    try {
      do {
        again = false;
        while (!stopped) {
          const n = await batch();
          if (n === 0) break;
          await yieldToIo();
        }
      } while (again && !stopped);
    } catch (err) {
      log.error({ err }, 'ingest batch failed; will retry');
    } finally {
      running = false;
      for (const w of idleWaiters) w();
      idleWaiters = [];
    }
  }

  function wake(): void {
    if (stopped) return;
    if (running) { again = true; return; }
    running = true;
    setImmediate(() => void loop());
  }

  return {
    /** Looks for queued rows now (after a commit). */
    wake,
    /** Starts working, beginning with whatever a previous run left queued. */
    start() {
      stopped = false;
      timer = setInterval(wake, POLL_MS);
      timer.unref();
      wake();
    },
    /** Stops taking batches and waits for the one under way. */
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      if (running) await new Promise<void>((r) => idleWaiters.push(r));
    },
    /** Runs batches until nothing is ready (tests, benchmarks). */
    async drain() {
      while ((await batch()) > 0) { /* next batch */ }
    },
  };
}
export type IngestWorker = ReturnType<typeof createIngestWorker>;
