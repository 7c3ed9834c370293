import type { Db } from '../db/connection.js';

/**
 * How the engines learn that a recording transaction queued deliveries, which differs between
 * the backends (sqlite/ and postgres/queued-announcer.ts).
 */
export interface QueuedAnnouncer {
  /** Called inside the recording transaction with the webhooks that got deliveries (no repeats, at least one). */
  announce(trx: Db, webhookIds: number[], now: number): Promise<void>;
}

/**
 * How a delivery being sent (`sending`) is tied to the sender, so that only a dead sender's
 * deliveries go back to the queue: the part of the engine that differs between one SQLite process
 * and many nodes on one PostgreSQL database.
 */
export interface DeliveryClaims {
  /** Inside the claiming transaction, before it commits: these deliveries are this node's now. */
  hold(ids: number[]): Promise<void>;
  /** After the outcomes of these deliveries (or their release) are committed, or when a claim rolled back. */
  letGo(ids: number[]): Promise<void>;
  /**
   * Queues again the deliveries left `sending` by a sender that is gone; returns how many.
   * `atStart`: before this process sends anything.
   */
  recover(atStart: boolean): Promise<number>;
}
