import { join } from 'node:path';
import type { Core } from '../../core.js';
import { createIngestStore } from '../../mailstore/inbound-store.js';
import type { Markers } from '../../mailstore/markers.js';
import { createStorageThread } from '../../mailstore/sqlite/storage-thread.js';
import type { EventRecorder } from '../../webhooks/events.js';
import { createAcceptor } from '../accept.js';
import type { BlobStore } from '../blobs.js';
import { createJournal } from '../journal.js';
import type { IngestBackend } from '../ports.js';
import { createOrphanSweep } from '../sweep.js';
import type { QueuedRawParser, RawParser, RecipientResolver } from '../../inbound/types.js';
import { countStoredVerdicts } from '../../spam/metrics.js';
import { createIngestWorker } from '../worker.js';

/**
 * Ingestion on SQLite: SMTP mail is durable in the acceptance journal before its 250, API mail in
 * a group commit; the batch worker parses and has the storage thread (the one writer of mail,
 * src/mailstore/sqlite/) run the accept, move, store and submission transactions.
 */
export function createSqliteIngest(core: Core, deps: {
  resolve: RecipientResolver; events: EventRecorder; markers: Markers; blobs: BlobStore;
  onForwardsQueued(): void; onStored?: (mailboxIds: number[]) => void;
}): IngestBackend {
  const { blobs } = deps;
  const store = createIngestStore();
  let parser: RawParser | null = null;
  let queuedParser: QueuedRawParser | null = null;
  const thread = createStorageThread({
    dataDir: core.config.dataDir, markerCell: deps.markers.cell, spamFilter: core.config.spamFilter, clock: core.clock, logger: core.logger, onHints: (h) => deps.events.notify(h),
    // The thread shares the update-marker cell, so the largest stored marker is loaded first.
    beforeStart: () => deps.markers.ready(core.db),
  });
  const journal = createJournal({ dir: join(core.config.dataDir, 'journal'), logger: core.logger });
  const worker = createIngestWorker({
    db: core.db, store, blobs, thread, journal, clock: core.clock, logger: core.logger, parser: () => parser, queuedParser: () => queuedParser,
    onForwardsQueued: deps.onForwardsQueued, onStored: deps.onStored,
    onVerdicts: (v) => countStoredVerdicts(core.metrics.registry, v),
  });
  const acceptor = createAcceptor({
    db: core.db, store, blobs, resolve: deps.resolve, thread, journal, now: () => core.clock.now(), onCommitted: (rows) => worker.accepted('api', rows), onJournaled: () => worker.accepted('smtp'),
    inflowDelayMs: () => worker.inflowDelayMs(),
  });
  return {
    accept: {
      acceptMessage: acceptor.acceptMessage,
      acceptRaw: acceptor.acceptRaw,
      overQuota: acceptor.overQuota,
      // Like API mail, these commits wait behind storage batches: the worker keeps its batches short while they arrive.
      commitSubmissions: (jobs) => thread.submissions(jobs).finally(() => worker.accepted('api')),
    },
    worker,
    setRawParser(p, queued) { parser = p; queuedParser = queued ?? null; worker.wake(); },
    store,
    blobReads: blobs,
    sweepOrphans: createOrphanSweep({ db: core.db, store, blobs, clock: core.clock, logger: core.logger, journalRawPaths: () => journal.pendingRawPaths() }),
    /**
     * Recovers the acceptance journal (records not yet in the queue are moved first), then starts
     * the worker; the storage thread starts with the first message to commit or store.
     */
    async start() {
      await journal.open(await store.journalPosition(core.db));
      worker.start();
    },
    /** Stops the worker after its current batch, then the thread and the journal. */
    async stop() {
      await worker.stop();
      await thread.close();
      await journal.close();
    },
  };
}
