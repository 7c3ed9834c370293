import type { IngestStore } from '../mailstore/inbound-store.js';
import type { BlobStore } from './blobs.js';
import type { InboundMessage, QueuedRawParser, RawDelivery, RawParser } from '../inbound/types.js';
import type { QueueJob } from '../mailstore/submissions.js';

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

/** The one ingestion path, as the inbound paths use it. */
export interface Ingest {
  /**
   * API path: validates recipients (422 unknown, 409 duplicate message_id for a mailbox, 422 over
   * quota), commits durably, resolves. Storage per mailbox happens afterwards in the worker.
   */
  acceptMessage(tenantId: number, msg: InboundMessage): Promise<void>;
  /** SMTP path: commits the raw bytes and envelope durably and resolves; parsing and storage follow in the worker. */
  acceptRaw(delivery: RawDelivery): Promise<void>;
  /**
   * Submission's database part (mailstore/submissions.ts): a group of submissions' queue items and
   * daily counts, committed durably by the storage thread; the queued bytes' reference of each.
   */
  commitSubmissions(jobs: QueueJob[]): Promise<Array<number | null>>;
  /** Registers the parser the worker uses for raw SMTP messages. */
  setRawParser(parser: RawParser, queued?: QueuedRawParser): void;
  /** Registers `listener`, told after a stored batch that queued outbound forwards (committed by then). */
  onForwardsQueued(listener: () => void): void;
  /**
   * The mailboxes among `mailboxIds` whose quota (`quota_mb`, 0 = unlimited) has no room for
   * `size` more bytes (default 1: already full). SMTP answers 452 4.2.2 at RCPT for these, or 552
   * after DATA when the message's size is known.
   */
  overQuota(mailboxIds: number[], size?: number): Promise<number[]>;
  /**
   * Seconds to come back after while mail acknowledged and not yet stored is past its limit in
   * time (MAILSTEAD_INGEST_MAX_BACKLOG_SECONDS, backlog-limit.ts); null while there is room.
   * SMTP answers 451 4.3.1 then, and POST /v1/mail/inbound 503 with Retry-After.
   */
  backlogFull(): number | null;
}
