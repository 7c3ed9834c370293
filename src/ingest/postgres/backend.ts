import type { Core } from '../../core.js';
import { createEmailWrites } from '../../mailstore/email-writes.js';
import { createIngestStore } from '../../mailstore/inbound-store.js';
import type { Markers } from '../../mailstore/markers.js';
import { poolSubmissions } from '../../mailstore/submissions.js';
import { createEmailWriter } from '../../mailstore/writer.js';
import type { EventRecorder } from '../../webhooks/events.js';
import type { BlobStore } from '../blobs.js';
import type { IngestBackend } from '../ports.js';
import { createOrphanSweep } from '../sweep.js';
import type { RawParser, RecipientResolver } from '../../inbound/types.js';
import { createPgAcceptor } from './accept.js';
import { databaseBlobReads } from './blobs.js';
import { createPgBlobSweep } from './sweep.js';
import { countStoredVerdicts } from '../../spam/metrics.js';
import { createPgIngestWorker } from './worker.js';

/**
 * Ingestion on PostgreSQL (DECISIONS.md section 17): the acknowledgement is a group commit in the
 * database instead of the acceptance journal, and storage runs on this thread through the pool,
 * over the same transaction bodies as SQLite (src/mailstore/). Attachments are rows of the
 * database: readers of stored mail get them from it.
 */
export function createPostgresIngest(core: Core, deps: {
  resolve: RecipientResolver; events: EventRecorder; markers: Markers; blobs: BlobStore;
  onForwardsQueued(): void; onStored?: (mailboxIds: number[]) => void;
}): IngestBackend {
  const store = createIngestStore();
  let parser: RawParser | null = null;
  const worker = createPgIngestWorker({
    db: core.db, store, writer: createEmailWriter({ store: createEmailWrites(), markers: deps.markers, clock: core.clock }), markers: deps.markers,
    files: deps.blobs, clock: core.clock, logger: core.logger, parser: () => parser,
    onHints: (h) => deps.events.notify(h), onForwardsQueued: deps.onForwardsQueued, onStored: deps.onStored,
    onVerdicts: (v) => countStoredVerdicts(core.metrics.registry, v), spamFilter: core.config.spamFilter,
  });
  const acceptor = createPgAcceptor({ db: core.db, store, resolve: deps.resolve, now: () => core.clock.now(), onCommitted: (smtp, api) => worker.accepted(smtp, api) });
  // The files are scratch space there, swept after the blob rows (no acceptance journal names any).
  const sweepFiles = createOrphanSweep({ db: core.db, store: createIngestStore(), blobs: deps.blobs, clock: core.clock, logger: core.logger });
  return {
    accept: {
      acceptMessage: acceptor.acceptMessage,
      acceptRaw: acceptor.acceptRaw,
      overQuota: acceptor.overQuota,
      // submission's group commit (submission/deliver.ts) makes this one transaction per group.
      commitSubmissions: poolSubmissions(core.db, () => core.clock.now()),
    },
    // No in-flow delay here: acknowledgements are group commits of the database, not held back.
    worker: { ...worker, inflowDelayMs: () => 0 },
    // The queued parser (rows read by parser threads) is SQLite's: here rows come with their bytes.
    setRawParser(p) { parser = p; worker.wake(); },
    store,
    blobReads: databaseBlobReads(deps.blobs, core.db),
    sweepOrphans: createPgBlobSweep({ db: core.db, store, clock: core.clock, logger: core.logger, then: sweepFiles }),
    // Nothing to recover: what is queued is in the database.
    async start() { worker.start(); },
    stop: () => worker.stop(),
  };
}
