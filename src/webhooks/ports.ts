import type { Db } from '../db/connection.js';

/**
 * How the engines learn that a recording transaction queued deliveries, which differs between
 * the backends (sqlite/ and postgres/queued-announcer.ts).
 */
export interface QueuedAnnouncer {
  /** Called inside the recording transaction with the webhooks that got deliveries (no repeats, at least one). */
  announce(trx: Db, webhookIds: number[], now: number): Promise<void>;
}
