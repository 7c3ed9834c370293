import type { Core } from '../core.js';
import type { EmailWriter } from '../emails/writer.js';
import type { EventRecorder } from '../webhooks/events.js';
import { createAcceptor } from './accept.js';
import { createBlobStore } from './blobs.js';
import { ingestRoutes } from './routes.js';
import { createIngestStore } from './store.js';
import { createOrphanSweep } from './sweep.js';
import type { Ingest, RawParser, RecipientResolver } from './types.js';
import { createIngestWorker } from './worker.js';

/** Cron job name of the hourly sweep of files no row names. */
export const SWEEP_JOB = 'ingest.sweep-orphans';

/**
 * Wires ingestion: the blob store, the group-committing acceptor, the batch worker that stores
 * copies through the emails writer, and POST /v1/mail/inbound.
 */
export function createIngest(core: Core, deps: { resolve: RecipientResolver; events: EventRecorder; writer: EmailWriter }) {
  const store = createIngestStore();
  const blobs = createBlobStore(core.config.dataDir);
  let parser: RawParser | null = null;
  const worker = createIngestWorker({
    db: core.db, store, blobs, writer: deps.writer, events: deps.events, clock: core.clock, logger: core.logger, parser: () => parser,
  });
  const acceptor = createAcceptor({ db: core.db, store, blobs, resolve: deps.resolve, clock: core.clock, onCommitted: () => worker.accepted(), durable: core.durable });
  const ingest: Ingest = {
    acceptMessage: acceptor.acceptMessage,
    acceptRaw: acceptor.acceptRaw,
    overQuota: acceptor.overQuota,
    setRawParser(p: RawParser) { parser = p; worker.wake(); },
  };
  ingestRoutes({ registry: core.registry, ingest });
  const sweepOrphans = createOrphanSweep({ db: core.db, store, blobs, clock: core.clock, logger: core.logger });
  core.cron.add({ name: SWEEP_JOB, schedule: '17 * * * *', run: sweepOrphans });
  return { ingest, worker, store, blobs, sweepOrphans };
}
