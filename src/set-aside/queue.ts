/**
 * A dead-letter list: the rows of one queue that failed every try and were set aside so the rest
 * flowed on (a message ingest could not store, an outbound item, a webhook delivery or a task that
 * kept failing for a reason of ours). Each capability that owns such a queue answers for its own
 * rows; the operator's faces (routes.ts, cli.ts) are the same for all of them.
 */
export interface SetAsideQueue {
  /** The set-aside rows, oldest first, at most `limit`. */
  list(limit?: number): Promise<object[]>;
  /** How many rows are set aside (the queue's gauge). */
  count(): Promise<number>;
  /** Puts one set-aside row back in its queue for one more try; false when no row of that id is set aside. */
  retry(id: number): Promise<boolean>;
  /** Deletes one set-aside row (and what only it held); false when no row of that id is set aside. */
  discard(id: number): Promise<boolean>;
}

/** The queues whose set-aside rows an operator sees, as the API path and the CLI name them. */
export const SET_ASIDE_QUEUES = ['inbound', 'outbound', 'webhooks', 'tasks'] as const;
export type SetAsideQueueName = (typeof SET_ASIDE_QUEUES)[number];

/** Most set-aside rows one list answers (oldest first). */
export const SET_ASIDE_LIST_MAX = 1000;
