import type { Generated } from 'kysely';

/** A message accepted by ingest and not yet (or no longer needed to be) stored per mailbox. */
export interface InboundTable {
  id: Generated<number>;
  /** `api` (normalised JSON in `message`) or `smtp` (raw bytes in `raw` or the file `raw_path`). */
  kind: 'api' | 'smtp';
  /**
   * `queued` until the worker stored every copy, then `stored`; `failed` for a message that cannot
   * be parsed. `stored` has as many letters as `queued` so that marking a row keeps its record's
   * size: SQLite then overwrites it in place and writes only the pages whose bytes changed, never
   * the raw message's overflow pages (~11 instead of ~25 µs per row, ~1.5 instead of ~5.6 KB of
   * WAL for a 5 KB message). Rows stored by earlier versions say `done`, which means the same:
   * nothing reads the value beyond "not queued", and renaming them would rewrite all their bytes.
   */
  status: Generated<'queued' | 'stored' | 'done' | 'failed'>;
  /** api: the normalised message; smtp: the envelope. JSON. */
  message: string;
  /** JSON array of {tenantId, mailboxIds, forwards}: where the copies go. */
  targets: string;
  raw: Buffer | null;
  raw_path: string | null;
  size: number;
  error: string | null;
  attempts: Generated<number>;
  created_at: number;
  /** When the row failed for good (marking a row stored leaves it alone, see `status`). */
  done_at: number | null;
}

/** A message_id claimed for a mailbox by a queued API message (409 for a second one). */
export interface InboundReservationsTable {
  mailbox_id: number;
  message_id: string;
  inbound_id: number;
}

/** The one row saying how far the inbound queue holds the acceptance journal (journal.ts). */
export interface JournalStateTable {
  id: number;
  segment: number;
  position: number;
}

/** The tables of ingest. */
export interface IngestTables extends PgMailTables {
  journal_state: JournalStateTable;
  inbound: InboundTable;
  inbound_reservations: InboundReservationsTable;
}

/** PostgreSQL only (migration 013): the newest update marker handed out, one row (mailstore/markers.ts). */
export interface EmailMarkerTable {
  id: number;
  value: number;
}

/** PostgreSQL only (migration 013): attachment contents by SHA-256 (on SQLite they are files, blobs.ts). */
export interface BlobsTable {
  sha256: string;
  data: Buffer;
  created_at: number;
}

/** The PostgreSQL-only tables of mail (migration 013). */
export interface PgMailTables {
  email_marker: EmailMarkerTable;
  blobs: BlobsTable;
}
