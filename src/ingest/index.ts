import { Gauge } from 'prom-client';
import type { Core } from '../core.js';
import type { Markers } from '../mailstore/markers.js';
import type { EventRecorder } from '../webhooks/events.js';
import { createBlobStore } from './blobs.js';
import { ingestRoutes } from './routes.js';
import { createInboundSetAside } from './set-aside-queue.js';
import { setAsideRoutes } from '../set-aside/routes.js';
import { createBacklogLimit } from './backlog-limit.js';
import type { IngestBackend } from './ports.js';
import { createPostgresIngest } from './postgres/backend.js';
import { createSqliteIngest } from './sqlite/backend.js';
import { registerSpamMetrics } from '../spam/metrics.js';
import type { RecipientResolver } from '../inbound/types.js';
import type { Ingest } from './ports.js';
import { createParsing, defaultParserThreads } from './parse/index.js';

/** Cron job name of the hourly sweep of files no row names. */
export const SWEEP_JOB = 'ingest.sweep-orphans';

/**
 * Wires ingestion: the blob store, the backend of the configured database (sqlite/backend.ts or
 * postgres/backend.ts, chosen once here: accept, the batch worker and what it stores through),
 * POST /v1/mail/inbound, the set-aside routes, the gauges (read from the worker that runs) and the
 * hourly orphan sweep.
 */
export function createIngest(core: Core, deps: {
  resolve: RecipientResolver; events: EventRecorder; markers: Markers;
  /** Told after each committed batch of the mailboxes it stored mail in. */
  onStored?: (mailboxIds: number[]) => void;
  /** Parser threads (default: defaultParserThreads; 0 parses in-process). */
  parserThreads?: number;
}) {
  const blobs = createBlobStore(core.config.dataDir, () => core.clock.now());
  // Outbound delivery installs later and listens here, so forwards leave as soon as their batch commits.
  const forwardListeners: Array<() => void> = [];
  const backendDeps = {
    resolve: deps.resolve, events: deps.events, markers: deps.markers, blobs, onStored: deps.onStored,
    onForwardsQueued: () => { for (const listener of forwardListeners) listener(); },
  };
  const backend: IngestBackend = core.backend.choose({ sqlite: createSqliteIngest, postgres: createPostgresIngest })(core, backendDeps);
  registerSpamMetrics(core.metrics.registry);
  // The delivery pipeline's parse step: parser threads (mailparser + mailauth), or in-process.
  const parsing = createParsing(core, deps.parserThreads ?? defaultParserThreads());
  backend.setRawParser(parsing.parse, parsing.parseQueued);
  const { worker } = backend;
  const backlogLimit = createBacklogLimit(core.config.ingestMaxBacklogSeconds, () => worker.limitReading());
  const ingest: Ingest = {
    ...backend.accept,
    setRawParser: (p, queued) => backend.setRawParser(p, queued),
    onForwardsQueued(listener: () => void) { forwardListeners.push(listener); },
    backlogFull: () => backlogLimit.full(),
  };
  ingestRoutes({ registry: core.registry, ingest });
  // Set-aside mail (set-aside.ts): what the operator lists, retries and discards, and the gauge of it.
  const setAside = createInboundSetAside({
    db: core.db, store: backend.store, removeRaw: (name) => blobs.remove(blobs.rawFile(name)),
    requeued: () => worker.wake(),
  });
  // The first path is ingest's own; the second lists it beside the other queues' set-aside rows.
  for (const base of ['/v1/ingest/set-aside', '/v1/set-aside/inbound']) {
    setAsideRoutes({ registry: core.registry, base, what: 'inbound messages', queue: setAside });
  }
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
    registers: [core.metrics.registry], collect() { this.set(worker.backlog().messages); },
  });
  new Gauge({
    name: 'mailstead_ingest_backlog_seconds', help: 'Estimated time to store the backlog with nothing else arriving',
    registers: [core.metrics.registry], collect() { this.set(worker.backlog().seconds); },
  });
  new Gauge({
    name: 'mailstead_ingest_inflow_delay_seconds', help: 'Delay each SMTP message waits before its 250 while the backlog is past its bound',
    registers: [core.metrics.registry], collect() { this.set(worker.inflowDelayMs() / 1000); },
  });
  const sweepOrphans = () => backend.sweepOrphans();
  core.cron.add({ name: SWEEP_JOB, schedule: '17 * * * *', run: sweepOrphans });
  return {
    ingest, worker, store: backend.store, blobs: backend.blobReads, sweepOrphans,
    /** The parser set at start (tests wrap it through ingest.setRawParser). */
    parser: parsing.parse,
    /** Stops the parser threads (they also stop by themselves when idle). */
    stopParsers: () => parsing.close(),
    /** Recovers what a previous run left (SQLite: the acceptance journal) and starts the worker. */
    start: () => backend.start(),
    /** Stops the worker after its current batch, then what it runs on, then the parser threads. */
    stop: async () => { await backend.stop(); await parsing.close(); },
  };
}
