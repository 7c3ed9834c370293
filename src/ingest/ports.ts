import type { IngestStore } from '../mailstore/inbound-store.js';
import type { BlobStore } from './blobs.js';
import type { Ingest, QueuedRawParser, RawParser } from '../inbound/types.js';

/** The batch worker of a backend, as the gauges, the backlog limit and the set-aside service read and wake it. */
export interface IngestWorkerPort {
  /** Looks for queued rows now. */
  wake(): void;
  /** SMTP mail acknowledged and not yet stored, and the estimated time to store it. */
  backlog(): { messages: number; seconds: number };
  /** Every message accepted and not yet stored, and the storage time per row (backlog-limit.ts). */
  limitReading(): { messages: number; msPerRow: number };
  /** How long the next SMTP acknowledgement is held back (0 where the backend never holds one back). */
  inflowDelayMs(): number;
}

/**
 * Ingestion on one database, chosen once in index.ts: sqlite/backend.ts (acceptance journal,
 * storage thread) or postgres/backend.ts (group commits and storage in pool transactions,
 * DECISIONS.md section 17). Both run the same transaction bodies (src/mailstore/).
 */
export interface IngestBackend {
  /** The accept step (both inbound paths) and submission's database part. */
  accept: Pick<Ingest, 'acceptMessage' | 'acceptRaw' | 'overQuota' | 'commitSubmissions'>;
  worker: IngestWorkerPort;
  /** Registers the parser the worker uses for raw SMTP messages. */
  setRawParser(parser: RawParser, queued?: QueuedRawParser): void;
  /** The inbound queue's queries on this database (set-aside service). */
  store: IngestStore;
  /** Where readers of stored mail get attachments and raw files. */
  blobReads: BlobStore;
  /** The hourly sweep of files (and, on PostgreSQL, blob rows) nothing references. */
  sweepOrphans(): Promise<number>;
  /** Recovers what a previous run left and starts the worker. */
  start(): Promise<void>;
  /** Stops the worker after its current batch, then what it runs on. */
  stop(): Promise<void>;
}
