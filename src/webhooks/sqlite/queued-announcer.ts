import type { QueuedHint } from '../event-types.js';
import type { QueuedAnnouncer } from '../ports.js';

/**
 * SQLite: one process does all the work, and the engine's claim waits for the connection the
 * recording transaction holds, so it sees the rows once committed: this process's `onQueued` is
 * told on the next turn (after the caller's statement).
 */
export function createSqliteQueuedAnnouncer({ onQueued }: { onQueued?: (hints: QueuedHint[]) => void }): QueuedAnnouncer {
  return {
    async announce(_trx, webhookIds, now) {
      if (!onQueued) return;
      const hints = webhookIds.map((webhookId) => ({ webhookId, at: now }));
      setImmediate(() => onQueued(hints));
    },
  };
}
