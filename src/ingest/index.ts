import { join } from 'node:path';
import { Gauge } from 'prom-client';
import type { Core } from '../core.js';
import type { Markers } from '../emails/markers.js';
import type { EventRecorder } from '../webhooks/events.js';
import { createAcceptor } from './accept.js';
import { createBlobStore } from './blobs.js';
import { ingestRoutes } from './routes.js';
import { createSetAsideService, setAsideRoutes } from './set-aside-routes.js';
import { createBacklogLimit } from './backlog-limit.js';
import { createJournal } from './journal.js';
import { createIngestStore } from './store.js';
import { createStorageThread } from './storage-thread.js';
import { createOrphanSweep } from './sweep.js';
import { createEmailStore } from '../emails/store.js';
import { createEmailWriter } from '../emails/writer.js';
import { createOutboundStore } from '../outbound/store.js';
import { commitSubmissions } from '../submission/commit.js';
import { createPgAcceptor } from './pg-accept.js';
import { databaseBlobReads } from './pg-blobs.js';
import { createPgIngestStore } from './pg-store.js';
import { createPgBlobSweep } from './pg-sweep.js';
import { createPgIngestWorker } from './pg-worker.js';
import type { Ingest, QueuedRawParser, RawParser, RecipientResolver } from './types.js';
import { countStoredVerdicts, registerSpamMetrics } from '../spam/metrics.js';
import { createIngestWorker } from './worker.js';

/** Cron job name of the hourly sweep of files no row names. */
export const SWEEP_JOB = 'ingest.sweep-orphans';

/**
 * Wires ingestion: the blob store, the storage thread (where its write transactions run), the
 * group-committing acceptor, the batch worker that has the thread store copies through the emails
 * writer, and POST /v1/mail/inbound. `start` loads the update markers the thread shares and starts it.
 */
export function createIngest(core: Core, deps: {
  resolve: RecipientResolver; events: EventRecorder; markers: Markers;
  /** Told after each committed batch of the mailboxes it stored mail in. */
  onStored?: (mailboxIds: number[]) => void;
}) {
  const store = createIngestStore();
  const blobs = createBlobStore(core.config.dataDir, () => core.clock.now());
  let parser: RawParser | null = null;
  let queuedParser: QueuedRawParser | null = null;
  const thread = createStorageThread({
    dataDir: core.config.dataDir, markerCell: deps.markers.cell, spamFilter: core.config.spamFilter, clock: core.clock, logger: core.logger, onHints: (h) => deps.events.notify(h),
    // The thread shares the update-marker cell, so the largest stored marker is loaded first.
    beforeStart: () => deps.markers.ready(core.db),
  });
  const journal = createJournal({ dir: join(core.config.dataDir, 'journal'), logger: core.logger });
  // Outbound delivery installs later and listens here, so forwards leave as soon as their batch commits.
  const forwardListeners: Array<() => void> = [];
  const worker = createIngestWorker({
    db: core.db, store, blobs, thread, journal, clock: core.clock, logger: core.logger, parser: () => parser, queuedParser: () => queuedParser,
    onForwardsQueued: () => { for (const listener of forwardListeners) listener(); },
    onStored: deps.onStored,
    onVerdicts: (v) => countStoredVerdicts(core.metrics.registry, v),
  });
  registerSpamMetrics(core.metrics.registry);
  const acceptor = createAcceptor({
    db: core.db, store, blobs, resolve: deps.resolve, thread, journal, now: () => core.clock.now(), onCommitted: (rows) => worker.accepted('api', rows), onJournaled: () => worker.accepted('smtp'),
    inflowDelayMs: () => worker.inflowDelayMs(),
  });
  const ingest: Ingest = {
    acceptMessage: acceptor.acceptMessage,
    acceptRaw: acceptor.acceptRaw,
    overQuota: acceptor.overQuota,
    // Like API mail, these commits wait behind storage batches: the worker keeps its batches short while they arrive.
    commitSubmissions: (jobs) => thread.submissions(jobs).finally(() => worker.accepted('api')),
    setRawParser(p: RawParser, queued?: QueuedRawParser) { parser = p; queuedParser = queued ?? null; worker.wake(); },
    onForwardsQueued(listener: () => void) { forwardListeners.push(listener); },
    backlogFull: () => backlogLimit.full(),
  };
  // On PostgreSQL (DECISIONS.md section 17) the acknowledgement is a group commit in the database
  // instead of the acceptance journal, and storage runs on this thread through the pool: twins of
  // the acceptor and the worker (pg-accept.ts, pg-worker.ts) over the same transaction bodies.
  const onPostgres = core.dialect === 'postgres';
  let blobReads = blobs;
  let pgWorker: ReturnType<typeof createPgIngestWorker> | null = null;
  if (onPostgres) {
    const pgStore = createPgIngestStore();
    const outboundStore = createOutboundStore();
    pgWorker = createPgIngestWorker({
      db: core.db, store: pgStore, writer: createEmailWriter({ store: createEmailStore(), markers: deps.markers, clock: core.clock }), markers: deps.markers,
      files: blobs, clock: core.clock, logger: core.logger, parser: () => parser,
      onHints: (h) => deps.events.notify(h),
      onForwardsQueued: () => { for (const listener of forwardListeners) listener(); },
      onStored: deps.onStored,
      onVerdicts: (v) => countStoredVerdicts(core.metrics.registry, v),
      spamFilter: core.config.spamFilter,
    });
    const woken = pgWorker;
    const pgAcceptor = createPgAcceptor({ db: core.db, store: pgStore, resolve: deps.resolve, now: () => core.clock.now(), onCommitted: (smtp, api) => woken.accepted(smtp, api) });
    Object.assign(ingest, {
      acceptMessage: pgAcceptor.acceptMessage,
      acceptRaw: pgAcceptor.acceptRaw,
      overQuota: pgAcceptor.overQuota,
      // The storage thread's transaction body, in one transaction of the pool: submission's group
      // commit (submission/deliver.ts) makes it one per group, durable when PostgreSQL's commit returns.
      commitSubmissions: (jobs) => core.db.transaction().execute((trx) => commitSubmissions(trx, outboundStore, jobs, core.clock.now())),
      setRawParser(p: RawParser) { parser = p; woken.wake(); },
    } satisfies Partial<Ingest>);
    // Attachments are rows of the database there: readers of stored mail get them from it.
    blobReads = databaseBlobReads(blobs, core.db);
  }
  const backlogLimit = createBacklogLimit(core.config.ingestMaxBacklogSeconds, () => (pgWorker ?? worker).limitReading());
  ingestRoutes({ registry: core.registry, ingest });
  // Set-aside mail (set-aside.ts): what the operator lists, retries and discards, and the gauge of it.
  const setAside = createSetAsideService({
    db: core.db, store: onPostgres ? createPgIngestStore() : store, removeRaw: (name) => blobs.remove(blobs.rawFile(name)),
    requeued: () => (pgWorker ?? worker).wake(),
  });
  setAsideRoutes({ registry: core.registry, service: setAside });
  new Gauge({
    name: 'mailstead_ingest_set_aside', help: 'Inbound messages set aside after failing every try to store them (mailstead set-aside list)',
    registers: [core.metrics.registry], async collect() {
      // A scrape during shutdown (database closed) keeps the last value.
      try { this.set(await setAside.count()); } catch { /* kept */ }
    },
  });
  // Read at each scrape: a backlog that keeps growing, or an in-flow delay above 0, says storage is behind.
  new Gauge({
    name: 'mailstead_ingest_backlog_messages', help: 'SMTP messages acknowledged and not yet stored',
    registers: [core.metrics.registry], collect() { this.set((pgWorker ?? worker).backlog().messages); },
  });
  new Gauge({
    name: 'mailstead_ingest_backlog_seconds', help: 'Estimated time to store the backlog with nothing else arriving',
    registers: [core.metrics.registry], collect() { this.set((pgWorker ?? worker).backlog().seconds); },
  });
  new Gauge({
    name: 'mailstead_ingest_inflow_delay_seconds', help: 'Delay each SMTP message waits before its 250 while the backlog is past its bound',
    registers: [core.metrics.registry], collect() { this.set(worker.inflowDelayMs() / 1000); },
  });
  const sweepFiles = createOrphanSweep({ db: core.db, store, blobs, clock: core.clock, logger: core.logger, journalRawPaths: () => journal.pendingRawPaths() });
  // On PostgreSQL blobs are rows (the files are scratch space, swept after them).
  const sweepOrphans = onPostgres
    ? createPgBlobSweep({ db: core.db, store: createPgIngestStore(), clock: core.clock, logger: core.logger, then: sweepFiles })
    : sweepFiles;
  core.cron.add({ name: SWEEP_JOB, schedule: '17 * * * *', run: sweepOrphans });
  return {
    ingest, worker, store, blobs: blobReads, sweepOrphans,
    /**
     * Recovers the acceptance journal (records not yet in the queue are moved first), then starts
     * the worker; the storage thread starts with the first message to commit or store.
     */
    async start(): Promise<void> {
      if (pgWorker) { pgWorker.start(); return; } // nothing to recover: what is queued is in the database
      await journal.open(await store.journalPosition(core.db));
      worker.start();
    },
    /** Stops the worker after its current batch, then the thread and the journal. */
    async stop(): Promise<void> {
      if (pgWorker) { await pgWorker.stop(); return; }
      await worker.stop();
      await thread.close();
      await journal.close();
    },
  };
}
